// open_kubelet_pod_resources: the kubelet client from its own module, so that
// libzeus and every program that does not name pods stay free of gRPC.
#include <filesystem>

#include <fmt/format.h>

#include "zeus/attribution/kubelet.hpp"
#include "zeus/platform/dynamic_library.hpp"

namespace zeus::attribution {
namespace {

using OpenFn = PodResourcesSource* (*)(const char* socket, long long deadline_ms) noexcept;
struct KubeletModule {
    OpenFn open = nullptr;
};

Result<KubeletModule> load_module() {
    const std::string directory = directory_of_loaded_object(reinterpret_cast<const void*>(&load_module));
    const std::string path = (directory.empty() ? std::string(".") : directory) + "/" + kKubeletModulePath;
    auto library = DynamicLibrary::open(path);
    if (!library) {
        return Error{ErrorCode::NotFound,
                     "the kubelet client (" + path + ") cannot be loaded: " + library.error().message,
                     "install it with zeus (the Debian package and the images carry it), or give --kubelet-socket "
                     "none to name pods by UID only"};
    }
    auto open = library->function<OpenFn>(kKubeletModuleEntry);
    if (open == nullptr) {
        return Error{ErrorCode::NotFound, path + " has no " + kKubeletModuleEntry,
                     "reinstall zeus: the module does not belong to this libzeus"};
    }
    // Never unloaded: gRPC keeps threads and descriptors for the process's life.
    new DynamicLibrary(std::move(library).value());  // NOLINT: deliberately kept open
    return KubeletModule{open};
}

}  // namespace

Status check_kubelet_socket(const std::string& socket) {
    if (socket.empty()) {
        return Error{
            ErrorCode::InvalidArgument, "--kubelet-socket is empty",
            fmt::format("give the kubelet's PodResources socket (default {}), or none", kDefaultKubeletSocket)};
    }
    std::error_code error;
    const auto status = std::filesystem::status(socket, error);
    if (error || status.type() == std::filesystem::file_type::not_found ||
        status.type() == std::filesystem::file_type::socket) {
        return {};
    }
    if (status.type() == std::filesystem::file_type::directory) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("--kubelet-socket: {} is a folder, not the kubelet's socket", socket),
                     fmt::format("give the socket in it, e.g. --kubelet-socket {}, or none",
                                 (std::filesystem::path(socket) / "kubelet.sock").lexically_normal().string())};
    }
    return Error{ErrorCode::InvalidConfig, fmt::format("--kubelet-socket: {} is no socket", socket),
                 fmt::format("give the kubelet's PodResources socket (default {}), or none", kDefaultKubeletSocket)};
}

Result<std::shared_ptr<PodResourcesSource>> open_kubelet_pod_resources(const KubeletOptions& options) {
    static const Result<KubeletModule> module = load_module();  // loaded once, by the first caller
    if (!module) return module.error();
    PodResourcesSource* source = module->open(options.socket.c_str(), options.deadline.count());
    if (source == nullptr) {
        return Error{ErrorCode::InvalidState, "the kubelet client could not be made for " + options.socket,
                     "see the log above; give --kubelet-socket none to name pods by UID only"};
    }
    return std::shared_ptr<PodResourcesSource>(source);
}

}  // namespace zeus::attribution
