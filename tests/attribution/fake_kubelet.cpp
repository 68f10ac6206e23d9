#include "fake_kubelet.hpp"

#include <grpcpp/generic/async_generic_service.h>

#include <mutex>
#include <thread>

namespace zeus::testing {
namespace {

std::unique_ptr<grpc::Server> serve(const std::filesystem::path& socket, auto register_service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket.string(), grpc::InsecureServerCredentials());
    register_service(builder);
    return builder.BuildAndStart();
}

void stop(grpc::Server& server) {
    // Calls in flight (a delayed List) are cancelled at the deadline.
    server.Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
}

}  // namespace

v1::ListPodResourcesResponse list_reply(const std::vector<FakePod>& pods) {
    v1::ListPodResourcesResponse reply;
    for (const FakePod& pod : pods) {
        v1::PodResources* out = reply.add_pod_resources();
        out->set_name(pod.name);
        out->set_namespace_(pod.pod_namespace);
        for (const FakeContainer& container : pod.containers) {
            v1::ContainerResources* c = out->add_containers();
            c->set_name(container.name);
            for (const FakeDevices& devices : container.devices) {
                v1::ContainerDevices* d = c->add_devices();
                d->set_resource_name(devices.resource);
                for (const std::string& id : devices.ids) d->add_device_ids(id);
                d->mutable_topology()->add_nodes()->set_id(0);
            }
        }
    }
    return reply;
}

class FakeKubelet::Service final : public v1::PodResourcesLister::Service {
  public:
    grpc::Status List(grpc::ServerContext* context, const v1::ListPodResourcesRequest* /*request*/,
                      v1::ListPodResourcesResponse* reply) override {
        std::chrono::milliseconds delay{0};
        {
            std::lock_guard lock(mutex_);
            ++calls_;
            *reply = reply_;
            delay = delay_;
        }
        const auto until = std::chrono::steady_clock::now() + delay;
        while (std::chrono::steady_clock::now() < until && !context->IsCancelled()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return grpc::Status::OK;
    }

    std::mutex mutex_;
    v1::ListPodResourcesResponse reply_;
    std::chrono::milliseconds delay_{0};
    int calls_ = 0;
};

FakeKubelet::FakeKubelet(const std::filesystem::path& socket, std::vector<FakePod> pods)
    : service_(std::make_unique<Service>()) {
    reply(pods);
    server_ = serve(socket, [&](grpc::ServerBuilder& builder) { builder.RegisterService(service_.get()); });
}

FakeKubelet::~FakeKubelet() {
    if (server_) stop(*server_);
}

void FakeKubelet::reply(const std::vector<FakePod>& pods) { reply(list_reply(pods)); }

void FakeKubelet::reply(v1::ListPodResourcesResponse reply) {
    std::lock_guard lock(service_->mutex_);
    service_->reply_ = std::move(reply);
}

void FakeKubelet::delay(std::chrono::milliseconds delay) {
    std::lock_guard lock(service_->mutex_);
    service_->delay_ = delay;
}

int FakeKubelet::calls() const {
    std::lock_guard lock(service_->mutex_);
    return service_->calls_;
}

// Every method: reads the request, answers a field-1 length prefix with no
// end (0x0a, then a varint whose last byte still says "more").
class GarbageKubelet::Service final : public grpc::CallbackGenericService {
    class Reactor final : public grpc::ServerGenericBidiReactor {
      public:
        Reactor() { StartRead(&request_); }
        void OnReadDone(bool /*ok*/) override {
            static constexpr char kBytes[] = {'\x0a', '\xff', '\xff'};
            grpc::Slice slice(kBytes, sizeof kBytes);
            response_ = grpc::ByteBuffer(&slice, 1);
            StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
        }
        void OnDone() override { delete this; }

      private:
        grpc::ByteBuffer request_;
        grpc::ByteBuffer response_;
    };

  public:
    grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* /*context*/) override {
        return new Reactor;
    }
};

GarbageKubelet::GarbageKubelet(const std::filesystem::path& socket) : service_(std::make_unique<Service>()) {
    server_ =
        serve(socket, [&](grpc::ServerBuilder& builder) { builder.RegisterCallbackGenericService(service_.get()); });
}

GarbageKubelet::~GarbageKubelet() {
    if (server_) stop(*server_);
}

}  // namespace zeus::testing
