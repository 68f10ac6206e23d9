#include <fmt/format.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <future>

#include "podresources_v1.grpc.pb.h"
#include "zeus/attribution/kubelet.hpp"

namespace zeus::attribution {
namespace {

// The kubelet's own limit for this API's messages (podresources.DefaultMaxMsgSize);
// gRPC's default, 4 MiB, is less than a full node's List may need.
constexpr int kMaxReplyBytes = 16 * 1024 * 1024;
// After the kubelet restarts, the channel tries again within this long
// (gRPC's default backoff grows to 2 minutes: pods would stay unnamed as long).
constexpr int kMaxReconnectBackoffMs = 5000;

constexpr const char* kMountHint =
    "mount the host's /var/lib/kubelet/pod-resources into the exporter's pod (docs/attribution.md, "
    "\"Kubernetes\"), or point --kubelet-socket at the kubelet's socket";

Error call_error(const grpc::Status& status, const KubeletOptions& options) {
    const std::string where = "the kubelet's PodResources API at " + options.socket;
    switch (status.error_code()) {
        case grpc::StatusCode::DEADLINE_EXCEEDED:
            return Error{ErrorCode::Timeout,
                         fmt::format("{} did not answer within {} ms", where, options.deadline.count()),
                         "pods are named once it answers; a kubelet that is always this slow needs a longer "
                         "--kubelet-timeout"};
        case grpc::StatusCode::UNIMPLEMENTED:
            return Error{ErrorCode::NotSupported, fmt::format("{} has no v1 List: {}", where, status.error_message()),
                         "the v1 API is served by Kubernetes 1.20 and later"};
        case grpc::StatusCode::INTERNAL:
        case grpc::StatusCode::RESOURCE_EXHAUSTED:
        case grpc::StatusCode::DATA_LOSS:
            return Error{ErrorCode::InvalidState,
                         fmt::format("{} sent a reply that cannot be read: {}", where, status.error_message()),
                         "pods stay unnamed until it sends a valid one"};
        default:
            return Error{ErrorCode::Unavailable,
                         fmt::format("cannot reach {}: {} ({})", where, status.error_message(),
                                     static_cast<int>(status.error_code())),
                         kMountHint};
    }
}

Error malformed(const KubeletOptions& options, const std::string& what) {
    return Error{ErrorCode::InvalidState,
                 fmt::format("the kubelet's PodResources API at {} sent a malformed reply: {}", options.socket, what),
                 "pods stay unnamed until it sends a valid one"};
}

}  // namespace

// The reply comes as bytes and is parsed here, not by the generated stub:
// gRPC's stub reports a reply it cannot parse as "No message returned"
// (UNIMPLEMENTED), which would read as a kubelet without the API.
struct KubeletPodResources::Connection {
    using Stub = grpc::TemplatedGenericStub<v1::ListPodResourcesRequest, grpc::ByteBuffer>;
    explicit Connection(const std::shared_ptr<grpc::Channel>& channel) : stub(channel) {}
    Stub stub;
    const std::string list_method = fmt::format("/{}/List", v1::PodResourcesLister::service_full_name());
};

KubeletPodResources::KubeletPodResources(KubeletOptions options) : options_(std::move(options)) {
    grpc::ChannelArguments arguments;
    arguments.SetMaxReceiveMessageSize(kMaxReplyBytes);
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
    // "unix:" followed by a relative or an absolute path (gRPC's naming).
    connection_ = std::make_unique<Connection>(
        grpc::CreateCustomChannel("unix:" + options_.socket, grpc::InsecureChannelCredentials(), arguments));
}

KubeletPodResources::~KubeletPodResources() = default;

Result<std::vector<ContainerAllocation>> KubeletPodResources::gpu_allocations() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
    const v1::ListPodResourcesRequest request;
    grpc::ByteBuffer bytes;
    std::promise<grpc::Status> finished;
    connection_->stub.UnaryCall(&context, connection_->list_method, grpc::StubOptions(), &request, &bytes,
                                [&finished](grpc::Status status) { finished.set_value(std::move(status)); });
    // Bounded by the deadline: gRPC finishes every call by then.
    const grpc::Status status = finished.get_future().get();
    if (!status.ok()) return call_error(status, options_);
    v1::ListPodResourcesResponse reply;
    if (const grpc::Status parsed =
            grpc::SerializationTraits<v1::ListPodResourcesResponse>::Deserialize(&bytes, &reply);
        !parsed.ok()) {
        return malformed(options_, "it is no ListPodResourcesResponse (" + parsed.error_message() + ")");
    }

    std::vector<ContainerAllocation> out;
    for (const v1::PodResources& pod : reply.pod_resources()) {
        if (pod.name().empty() || pod.namespace_().empty()) {
            return malformed(options_, fmt::format("a pod without a name or namespace ('{}' in '{}')", pod.name(),
                                                   pod.namespace_()));
        }
        for (const v1::ContainerResources& container : pod.containers()) {
            if (container.name().empty()) {
                return malformed(options_,
                                 fmt::format("a container without a name in pod {}/{}", pod.namespace_(), pod.name()));
            }
            ContainerAllocation allocation{pod.namespace_(), pod.name(), container.name(), {}};
            for (const v1::ContainerDevices& devices : container.devices()) {
                if (!is_gpu_resource(devices.resource_name())) continue;
                allocation.device_ids.insert(allocation.device_ids.end(), devices.device_ids().begin(),
                                             devices.device_ids().end());
            }
            if (!allocation.device_ids.empty()) out.push_back(std::move(allocation));
        }
    }
    return out;
}

}  // namespace zeus::attribution
