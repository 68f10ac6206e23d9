// The kubelet module's entry point (zeus-native/kubelet.so), which libzeus's
// open_kubelet_pod_resources loads: the only place gRPC enters a process.
#include "zeus/attribution/kubelet.hpp"

extern "C" __attribute__((visibility("default"))) zeus::attribution::PodResourcesSource*
zeus_kubelet_pod_resources_open(const char* socket, long long deadline_ms) noexcept {
    try {
        return new zeus::attribution::KubeletPodResources(
            zeus::attribution::KubeletOptions{socket, std::chrono::milliseconds(deadline_ms)});
    } catch (...) {
        return nullptr;
    }
}
