#include "zeus/platform/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>

namespace zeus {

Result<DynamicLibrary> DynamicLibrary::open(const std::string& name_or_path) {
    dlerror();
    void* handle = dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        return Error{ErrorCode::LibraryNotFound,
                     "cannot load " + name_or_path + ": " + (why != nullptr ? why : "unknown dlopen error"), "",
                     0};
    }
    return DynamicLibrary(handle, name_or_path);
}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
    if (this != &other) {
        if (handle_ != nullptr) dlclose(handle_);
        handle_ = std::exchange(other.handle_, nullptr);
        name_ = std::move(other.name_);
    }
    return *this;
}

DynamicLibrary::~DynamicLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* symbol_name) const {
    if (handle_ == nullptr) return nullptr;
    return dlsym(handle_, symbol_name);
}

std::string DynamicLibrary::resolved_path() const {
    if (handle_ == nullptr) return {};
    link_map* map = nullptr;
    if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        map->l_name[0] != '\0') {
        return map->l_name;
    }
    return name_;
}

std::string directory_of_loaded_object(const void* address) {
    Dl_info info{};
    if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
    std::error_code ec;
    auto path = std::filesystem::canonical(info.dli_fname, ec);
    if (ec) return {};
    return path.parent_path().string();
}

}  // namespace zeus
