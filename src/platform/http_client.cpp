#include "zeus/platform/http_client.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <memory>
#include <optional>
#include <utility>

#include "platform/curl_api.hpp"

namespace zeus {
namespace {

// Bounds what a misbehaving peer can make us buffer; every server we talk to
// answers in kilobytes.
constexpr std::size_t kMaxBody = 8U << 20U;

struct Sink {
    std::string body;
    bool overflow = false;
};

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t n = size * count;
    if (sink->body.size() + n > kMaxBody) {
        sink->overflow = true;
        return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    sink->body.append(data, n);
    return n;
}

struct SlistDeleter {
    const CurlApi* api;
    void operator()(curl_slist* list) const { api->slist_free_all(list); }
};

std::string group_of(gid_t gid) {
    if (const group* entry = ::getgrgid(gid)) return entry->gr_name;
    return std::to_string(gid);
}

std::string owner_of(uid_t uid) {
    if (const passwd* entry = ::getpwuid(uid)) return entry->pw_name;
    return std::to_string(uid);
}

// curl says only "Couldn't connect to server" when a Unix socket is missing,
// not ours to use, or has nobody behind it; each needs another fix.
std::optional<Error> unix_socket_problem(const HttpEndpoint& endpoint, const HttpRequest& req) {
    const std::string& path = endpoint.unix_socket_path;
    const auto failed = [&](ErrorCode code, const std::string& why, std::string fix) {
        return Error{code, fmt::format("could not reach {} ({} {}): {}", endpoint.name, req.method, req.target, why),
                     std::move(fix)};
    };
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0) {
        return failed(ErrorCode::Unavailable, fmt::format("{} does not exist", path), endpoint.unreachable_fix);
    }
    if (!S_ISSOCK(status.st_mode)) {
        return failed(ErrorCode::Unavailable, fmt::format("{} is not a socket", path), endpoint.unreachable_fix);
    }
    if (::access(path.c_str(), W_OK) != 0) {
        const std::string group = group_of(status.st_gid);
        return failed(
            ErrorCode::NoPermission,
            fmt::format("permission denied: {} is {}:{}, mode {:o}, and this user ({}) is neither its owner "
                        "nor in group {} (connecting needs write permission on the socket)",
                        path, owner_of(status.st_uid), group, status.st_mode & 07777U, owner_of(::geteuid()), group),
            fmt::format("ask an administrator to add you to group {} (`sudo adduser $USER {}`, then log in "
                        "again), or to give you a token for the daemon's TCP address",
                        group, group));
    }
    return std::nullopt;
}

}  // namespace

HttpClient::HttpClient(HttpEndpoint endpoint) : endpoint_(std::move(endpoint)) {
    const auto& api = curl_api();
    if (api) curl_ = (*api)->easy_init();
}

HttpClient::~HttpClient() {
    if (curl_ != nullptr) (*curl_api())->easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpReply> HttpClient::request(std::string_view method, const std::string& target,
                                      std::chrono::milliseconds timeout) {
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.timeout = timeout;
    return request(req);
}

namespace {

struct StreamSink {
    const CurlApi* api = nullptr;
    CURL* curl = nullptr;
    const std::function<bool(std::string_view)>* on_data = nullptr;
    const std::function<bool()>* keep_going = nullptr;
    long status = 0;
    Sink refused;  // the body of an answer that is not 200
    bool ended = false;
};

std::size_t write_stream(char* data, std::size_t size, std::size_t count, void* user) {
    auto* sink = static_cast<StreamSink*>(user);
    if (sink->status == 0) sink->api->easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &sink->status);
    if (sink->status != 200) return write_body(data, size, count, &sink->refused);
    if (!(*sink->keep_going)() || !(*sink->on_data)(std::string_view(data, size * count))) {
        sink->ended = true;
        return 0;
    }
    return size * count;
}

int stream_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* sink = static_cast<StreamSink*>(user);
    if ((*sink->keep_going)()) return 0;
    sink->ended = true;
    return 1;  // CURLE_ABORTED_BY_CALLBACK
}

}  // namespace

Result<HttpReply> HttpClient::request(const HttpRequest& req) {
    Sink sink;
    return perform(
        req,
        [&](const CurlApi& api, void* handle) {
            auto* curl = static_cast<CURL*>(handle);
            api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
            api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_body);
            api.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
        },
        [&](int rc, const CurlApi&, void*) -> std::optional<Result<HttpReply>> {
            if (rc != CURLE_OK && sink.overflow) return overflow_error(req);
            HttpReply reply;
            reply.body = std::move(sink.body);
            if (rc == CURLE_OK) return reply;
            return std::nullopt;
        });
}

Result<HttpReply> HttpClient::stream(const HttpRequest& req, const std::function<bool(std::string_view)>& on_data,
                                     const std::function<bool()>& keep_going) {
    StreamSink sink;
    sink.on_data = &on_data;
    sink.keep_going = &keep_going;
    return perform(
        req,
        [&](const CurlApi& api, void* handle) {
            auto* curl = static_cast<CURL*>(handle);
            sink.api = &api;
            sink.curl = curl;
            api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, 0L);
            api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_stream);
            api.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
            api.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &stream_progress);
            api.easy_setopt(curl, CURLOPT_XFERINFODATA, &sink);
            api.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        },
        [&](int rc, const CurlApi&, void*) -> std::optional<Result<HttpReply>> {
            if (rc != CURLE_OK && sink.refused.overflow) return overflow_error(req);
            if (rc != CURLE_OK && !sink.ended) return std::nullopt;
            HttpReply reply;
            reply.body = std::move(sink.refused.body);
            return reply;
        });
}

Error HttpClient::overflow_error(const HttpRequest& req) const {
    return Error{
        ErrorCode::InvalidState,
        fmt::format("{} answered {} {} with more than {} MiB", endpoint_.name, req.method, req.target, kMaxBody >> 20U),
        endpoint_.unreachable_fix, 0};
}

Result<HttpReply> HttpClient::perform(const HttpRequest& req, const Configure& configure, const Finish& finish) {
    std::lock_guard lock(mutex_);
    const auto& loaded = curl_api();
    if (!loaded) {
        Error err = loaded.error();
        err.message = fmt::format("cannot talk to {}: {}", endpoint_.name, err.message);
        return err;
    }
    const CurlApi& api = **loaded;
    auto* curl = static_cast<CURL*>(curl_);
    if (curl == nullptr) {
        return Error{ErrorCode::Memory, fmt::format("could not create a libcurl handle to talk to {}", endpoint_.name),
                     "", 0};
    }
    // reset keeps the open connection and caches; only the options go.
    api.easy_reset(curl);
    const std::string url = endpoint_.base_url + req.target;
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    std::unique_ptr<curl_slist, SlistDeleter> headers(nullptr, SlistDeleter{&api});
    auto add_header = [&headers, &api](const std::string& h) {
        curl_slist* grown = api.slist_append(headers.get(), h.c_str());
        if (grown != nullptr) {
            (void)headers.release();
            headers.reset(grown);
        }
    };
    for (const auto& h : endpoint_.headers) add_header(h);
    for (const auto& h : req.headers) add_header(h);
    // An empty value removes curl's default ("application/x-www-form-urlencoded" for POST).
    add_header("Content-Type:" + (req.content_type.empty() ? std::string() : " " + req.content_type));

    api.easy_setopt(curl, CURLOPT_URL, url.c_str());
    if (!endpoint_.unix_socket_path.empty()) {
        api.easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, endpoint_.unix_socket_path.c_str());
    }
    if (endpoint_.bypass_proxy) api.easy_setopt(curl, CURLOPT_PROXY, "");
    api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for timeouts: we may run in any thread
    api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(endpoint_.connect_timeout.count()));
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer.data());
    api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    configure(api, curl);
    if (req.method == "GET") {
        api.easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    } else {
        if (req.method == "POST") {
            api.easy_setopt(curl, CURLOPT_POST, 1L);
        } else {
            const std::string method(req.method);
            api.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
        }
        api.easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.c_str());
        api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    }

    const CURLcode rc = api.easy_perform(curl);
    auto finished = finish(static_cast<int>(rc), api, curl);
    if (!finished) {
        if (rc == CURLE_COULDNT_CONNECT && !endpoint_.unix_socket_path.empty()) {
            if (auto problem = unix_socket_problem(endpoint_, req)) return std::move(*problem);
        }
        const std::string detail = error_buffer[0] != '\0' ? error_buffer.data() : api.easy_strerror(rc);
        const bool timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        return Error{timed_out ? ErrorCode::Timeout : ErrorCode::Unavailable,
                     fmt::format("could not reach {} ({} {}): {}", endpoint_.name, req.method, req.target, detail),
                     timed_out ? endpoint_.timeout_fix : endpoint_.unreachable_fix, static_cast<int>(rc)};
    }
    if (!*finished) return std::move(*finished);
    HttpReply reply = std::move(*finished).value();
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
    char* content_type = nullptr;
    if (api.easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK && content_type != nullptr) {
        reply.content_type = content_type;
    }
    return reply;
}

}  // namespace zeus
