// Kubernetes names for the workloads of attribution: the namespace and name of
// the pod behind a cgroup's pod UID, and the name of the container behind a
// container id. The cgroup path has the UID and the id but never the names;
// the kubelet's PodResources API has the names and each container's devices
// but never the UID or id. The two meet on the GPUs: a pod UID seen on GPUs
// 0 and 2 belongs to the pod allocated (at least) GPUs 0 and 2. A name is
// given only when the allocations leave exactly one choice; otherwise the
// workload keeps its UID alone (docs/attribution.md, "Kubernetes").
//
// This layer knows nothing of gRPC: the kubelet client that fills
// ContainerAllocation lives in src/attribution/kubelet/, linked only by the
// binaries that serve it (the exporter), not by libzeus or the wheel.
#pragma once

#include <compare>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::attribution {

// One container's GPU devices, as the kubelet allocated them.
struct ContainerAllocation {
    std::string pod_namespace;
    std::string pod_name;
    std::string container_name;
    std::vector<std::string> device_ids;  // the device plugins' ids, of GPU resources only
};

// Where allocations come from: the kubelet (KubeletPodResources), a fake in tests.
class PodResourcesSource {
  public:
    virtual ~PodResourcesSource() = default;
    // The node's containers that hold a GPU resource. Unavailable when the
    // kubelet does not answer, Timeout past the deadline, InvalidState for a
    // malformed reply.
    [[nodiscard]] virtual Result<std::vector<ContainerAllocation>> gpu_allocations() = 0;
};

// GPU resources by their device plugins' names: nvidia.com/gpu (and the
// time-slicing plugin's nvidia.com/gpu.shared), nvidia.com/mig-<profile>, amd.com/gpu.
[[nodiscard]] bool is_gpu_resource(std::string_view resource_name);

// What a device plugin's id says about the GPU it is on.
struct GpuDeviceId {
    // The physical GPU: its UUID (GPU-...) or its PCI address, lower case with
    // the domain's leading zeros dropped ("0:3b:00.0"); empty when the id
    // names only a MIG instance (MIG-<uuid>).
    std::string gpu;
    std::string mig_uuid;  // MIG-..., for a MIG instance
    bool replica = false;  // GPU-<uuid>::<n>: one of the time-sliced shares of the GPU
};
// GPU-<uuid>, GPU-<uuid>::<n> (a time-sliced replica), MIG-<uuid>,
// MIG-GPU-<uuid>/<gi>/<ci> (older NVIDIA plugins) or a PCI address (AMD);
// InvalidArgument naming the id otherwise.
[[nodiscard]] Result<GpuDeviceId> parse_gpu_device_id(std::string_view id);
// "0000:3B:00.0" and "00000000:3b:00.0" alike -> "0:3b:00.0".
[[nodiscard]] std::string normalized_pci_address(std::string_view address);

// A GPU the exporter attributes, by every id a device plugin may use for it.
struct GpuIds {
    std::size_t gpu = 0;  // the attribution layer's GPU index
    std::string uuid;
    std::string pci_bus_id;
    // Its MIG instances' UUIDs, when the device layer lists them. A MIG-<uuid>
    // that no GPU lists may be on any of them.
    std::vector<std::string> mig_uuids;
};

// A pod seen on a GPU in one pass: a resolved process's cgroup pod UID and
// container id (empty when the path names none).
struct PodSighting {
    std::size_t gpu = 0;
    std::string pod_uid;
    std::string container_id;
    auto operator<=>(const PodSighting&) const = default;
};

struct PodName {
    std::string pod_namespace;
    std::string name;
    auto operator<=>(const PodName&) const = default;
};

// The one container the kubelet allocated a whole GPU to (by its GPU UUID or
// PCI address: no replica, no MIG instance, no other container on the GPU).
// Under IdlePolicy::ByAllocation it is accountable for the GPU's energy that
// no process was charged with.
struct GpuHolder {
    PodName pod;
    std::string container_name;
    std::string pod_uid;  // when the pod's name was learned from a sighting; empty otherwise
};

// Learns names from the kubelet's allocations and keeps them: a pod UID's
// name never changes, so a name once given stays while the pod is live,
// through kubelet outages too.
class PodNamer {
  public:
    explicit PodNamer(std::vector<GpuIds> gpus);

    // Whether a sighting's pod or container has no name yet: only then is the
    // kubelet worth asking.
    [[nodiscard]] bool needs_names(const std::set<PodSighting>& sightings) const;

    // Names the sighted pods and containers that the allocations place
    // unambiguously. The errors: device ids that are no GPU's id form
    // (ignored), for the caller's error count.
    std::vector<Error> learn(const std::vector<ContainerAllocation>& allocations,
                             const std::set<PodSighting>& sightings);

    // Each GPU's holder, by GPU index, for the GPUs allocated whole to one container.
    [[nodiscard]] std::map<std::size_t, GpuHolder> holders(const std::vector<ContainerAllocation>& allocations) const;

    // Forgets the pods and containers that are no longer live (bounded memory).
    void retain(const std::set<std::string>& live_pod_uids, const std::set<std::string>& live_container_ids);

    [[nodiscard]] const PodName* pod(std::string_view pod_uid) const;
    [[nodiscard]] const std::string* container(std::string_view container_id) const;

  private:
    struct Resolved {
        std::set<std::size_t> gpus;
        bool anywhere = false;  // a device whose GPU cannot be told (an unlisted MIG UUID)
        bool whole = false;     // a whole GPU: neither a replica nor a MIG instance
    };
    // The GPUs of one device id; an Error for an id of no known form.
    Result<Resolved> gpus_of(std::string_view device_id) const;
    void name_pods(const std::map<PodName, Resolved>& pods, const std::set<PodSighting>& sightings);
    void name_containers(const std::map<std::pair<PodName, std::string>, Resolved>& containers,
                         const std::set<PodSighting>& sightings);

    std::vector<GpuIds> gpus_;
    std::map<std::string, PodName, std::less<>> pods_;            // pod UID -> its pod
    std::map<std::string, std::string, std::less<>> containers_;  // container id -> its name
};

}  // namespace zeus::attribution
