// A shared library opened at run time (dlopen). Vendor libraries (NVML, AMD
// SMI) are always loaded this way so one binary runs with or without them.
#pragma once

#include <string>
#include <utility>

#include "zeus/platform/error.hpp"

namespace zeus {

class DynamicLibrary {
  public:
    // Opens `name_or_path` with the dynamic loader's search rules (a bare
    // soname searches LD_LIBRARY_PATH and the system paths).
    static Result<DynamicLibrary> open(const std::string& name_or_path);

    DynamicLibrary(DynamicLibrary&& other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)), name_(std::move(other.name_)) {}
    DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
    DynamicLibrary(const DynamicLibrary&) = delete;
    DynamicLibrary& operator=(const DynamicLibrary&) = delete;
    ~DynamicLibrary();

    // The address of `symbol`, or nullptr when the library does not export it.
    [[nodiscard]] void* symbol(const char* symbol) const;

    template <class Fn>
    [[nodiscard]] Fn function(const char* symbol_name) const {
        return reinterpret_cast<Fn>(symbol(symbol_name));  // NOLINT: dlsym's documented use
    }

    // The file the loader actually opened (resolved through the search path).
    [[nodiscard]] std::string resolved_path() const;
    [[nodiscard]] const std::string& requested_name() const { return name_; }

  private:
    DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
    void* handle_ = nullptr;
    std::string name_;
};

// Directory holding the shared object that contains `address` (dladdr), or
// empty when it cannot be told. Used to find files installed next to libzeus.
[[nodiscard]] std::string directory_of_loaded_object(const void* address);

}  // namespace zeus
