// A kubelet for tests: the real PodResources v1 gRPC service (the code
// generated from src/attribution/kubelet/podresources_v1.proto) on a Unix
// socket, answering List with the pods a test sets, after a delay it sets.
// And a server on the same kind of socket whose every answer is bytes that
// no protobuf message parses from (a malformed reply on the wire).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "podresources_v1.grpc.pb.h"

namespace zeus::testing {

struct FakeDevices {
    std::string resource;  // nvidia.com/gpu...
    std::vector<std::string> ids;
};
struct FakeContainer {
    std::string name;
    std::vector<FakeDevices> devices;
};
struct FakePod {
    std::string pod_namespace;
    std::string name;
    std::vector<FakeContainer> containers;
};
[[nodiscard]] v1::ListPodResourcesResponse list_reply(const std::vector<FakePod>& pods);

class FakeKubelet {
  public:
    // Serving on `socket` once constructed; stops (cancelling calls in flight) when destroyed.
    explicit FakeKubelet(const std::filesystem::path& socket, std::vector<FakePod> pods = {});
    ~FakeKubelet();
    FakeKubelet(const FakeKubelet&) = delete;
    FakeKubelet& operator=(const FakeKubelet&) = delete;

    void reply(const std::vector<FakePod>& pods);
    void reply(v1::ListPodResourcesResponse reply);
    // Each List answers this long after it came, or when the caller gives up.
    void delay(std::chrono::milliseconds delay);
    [[nodiscard]] int calls() const;
    [[nodiscard]] bool serving() const { return server_ != nullptr; }

  private:
    class Service;
    std::unique_ptr<Service> service_;
    std::unique_ptr<grpc::Server> server_;
};

class GarbageKubelet {
  public:
    explicit GarbageKubelet(const std::filesystem::path& socket);
    ~GarbageKubelet();
    GarbageKubelet(const GarbageKubelet&) = delete;
    GarbageKubelet& operator=(const GarbageKubelet&) = delete;
    [[nodiscard]] bool serving() const { return server_ != nullptr; }

  private:
    class Service;
    std::unique_ptr<Service> service_;
    std::unique_ptr<grpc::Server> server_;
};

}  // namespace zeus::testing
