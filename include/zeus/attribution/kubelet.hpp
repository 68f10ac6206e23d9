// The kubelet's PodResources v1 API (List) over gRPC on its Unix socket: which
// pod and container holds which GPU (docs/attribution.md, "Kubernetes").
// KubeletPodResources is in the zeus_kubelet library, not libzeus; programs
// get it through open_kubelet_pod_resources, which loads it from its own
// module, so gRPC (its load-time descriptors, threads and fork handlers) is in
// a process only when it names pods.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "zeus/attribution/pods.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::attribution {

inline constexpr const char* kDefaultKubeletSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

struct KubeletOptions {
    std::string socket = kDefaultKubeletSocket;
    // A call that takes longer fails (Timeout): the sampler never waits on a slow kubelet for longer.
    std::chrono::milliseconds deadline{1000};
};

// Whether `socket` (--kubelet-socket) can be the kubelet's socket: empty is
// not; one that
// does not exist yet may appear when the kubelet starts; a folder (the
// pod-resources mount itself) or another kind of file never will, and is an
// InvalidConfig naming the path and what to give instead.
[[nodiscard]] Status check_kubelet_socket(const std::string& socket);

class KubeletPodResources final : public PodResourcesSource {
  public:
    // Connects lazily: a kubelet that is not up yet is an error of the call, not of this.
    explicit KubeletPodResources(KubeletOptions options);
    ~KubeletPodResources() override;
    KubeletPodResources(const KubeletPodResources&) = delete;
    KubeletPodResources& operator=(const KubeletPodResources&) = delete;

    // One List call. Unavailable: nothing listens on the socket (or it is not
    // the kubelet's); Timeout: no answer within the deadline; InvalidState: a
    // reply that does not parse, or a pod or container without a name;
    // NotSupported: a kubelet without the v1 API (before 1.20).
    [[nodiscard]] Result<std::vector<ContainerAllocation>> gpu_allocations() override;

  private:
    struct Connection;
    KubeletOptions options_;
    std::unique_ptr<Connection> connection_;
};

// A KubeletPodResources from the kubelet module (`zeus-native/kubelet.so`
// next to libzeus, loaded once and never unloaded). NotFound names the module
// and the fix when it is not installed (or this build has none: the Python
// wheel's libzeus).
[[nodiscard]] Result<std::shared_ptr<PodResourcesSource>> open_kubelet_pod_resources(const KubeletOptions& options);

// The module's one entry point (C linkage, so dlsym finds it by this name).
inline constexpr const char* kKubeletModuleEntry = "zeus_kubelet_pod_resources_open";
inline constexpr const char* kKubeletModulePath = "zeus-native/kubelet.so";  // under libzeus's directory

}  // namespace zeus::attribution
