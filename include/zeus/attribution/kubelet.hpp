// The kubelet's PodResources v1 API (List) over gRPC on its Unix socket: which
// pod and container holds which GPU (docs/attribution.md, "Kubernetes"). In
// the zeus_kubelet library, not libzeus: only the binaries that ask the
// kubelet link gRPC.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "zeus/attribution/pods.hpp"

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

}  // namespace zeus::attribution
