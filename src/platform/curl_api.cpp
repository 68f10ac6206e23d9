#include "platform/curl_api.hpp"

#include <fmt/format.h>

#ifdef ZEUS_CURL_DLOPEN
#include <array>

#include "zeus/platform/dynamic_library.hpp"
#endif

namespace zeus {
namespace {

#ifdef ZEUS_CURL_DLOPEN
// Debian and Ubuntu also ship the same API built on GnuTLS (libcurl3-gnutls, which git pulls in).
constexpr std::array<const char*, 2> kCurlSonames{"libcurl.so.4", "libcurl-gnutls.so.4"};
constexpr const char* kInstallCurl =
    "install libcurl (Debian/Ubuntu: apt install libcurl4; RHEL/Rocky: dnf install libcurl; conda: conda install "
    "libcurl) or put the directory holding libcurl.so.4 on LD_LIBRARY_PATH; measuring energy and power needs no "
    "libcurl, only talking to zeusd, a Pushgateway or carbon/price services does";

template <class Fn>
bool bind(const DynamicLibrary& lib, Fn& slot, const char* name, const char*& missing) {
    slot = lib.function<Fn>(name);
    if (slot == nullptr && missing == nullptr) missing = name;
    return slot != nullptr;
}

Result<const CurlApi*> load() {
    auto opened = DynamicLibrary::open(kCurlSonames[0]);
    for (std::size_t i = 1; !opened && i < kCurlSonames.size(); ++i) {
        if (auto other = DynamicLibrary::open(kCurlSonames[i])) opened = std::move(other);
    }
    if (!opened) {
        return Error{ErrorCode::LibraryNotFound,
                     fmt::format("this build loads libcurl at run time for HTTP and {}", opened.error().message),
                     kInstallCurl, 0};
    }
    // Never closed: HttpClients may live until exit, and curl keeps global state.
    static const DynamicLibrary lib = std::move(opened).value();
    static CurlApi api;
    const char* missing = nullptr;
    bind(lib, api.global_init, "curl_global_init", missing);
    bind(lib, api.easy_init, "curl_easy_init", missing);
    bind(lib, api.easy_cleanup, "curl_easy_cleanup", missing);
    bind(lib, api.easy_reset, "curl_easy_reset", missing);
    bind(lib, api.easy_setopt, "curl_easy_setopt", missing);
    bind(lib, api.easy_perform, "curl_easy_perform", missing);
    bind(lib, api.easy_getinfo, "curl_easy_getinfo", missing);
    bind(lib, api.easy_strerror, "curl_easy_strerror", missing);
    bind(lib, api.slist_append, "curl_slist_append", missing);
    bind(lib, api.slist_free_all, "curl_slist_free_all", missing);
    if (missing != nullptr) {
        return Error{ErrorCode::FunctionNotFound,
                     fmt::format("{} does not export {}", lib.resolved_path(), missing),
                     kInstallCurl, 0};
    }
    return &api;
}
#else
Result<const CurlApi*> load() {
    static const CurlApi api{&curl_global_init, &curl_easy_init,   &curl_easy_cleanup, &curl_easy_reset,
                             &curl_easy_setopt, &curl_easy_perform, &curl_easy_getinfo, &curl_easy_strerror,
                             &curl_slist_append, &curl_slist_free_all};
    return &api;
}
#endif

Result<const CurlApi*> load_and_init() {
    auto api = load();
    // curl_global_init is not thread-safe on every libcurl build; the static
    // that holds this result makes it happen once.
    if (api) (void)(*api)->global_init(CURL_GLOBAL_DEFAULT);
    return api;
}

}  // namespace

const Result<const CurlApi*>& curl_api() {
    static const Result<const CurlApi*> api = load_and_init();
    return api;
}

}  // namespace zeus
