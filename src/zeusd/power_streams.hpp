// Power streams for Server-Sent Events. One poller thread per device, which
// polls only while someone listens: it sleeps until the first subscriber
// arrives and pauses when the last one leaves (the original's demand-driven
// pollers). A value is published only when it changed. A new subscriber gets
// the latest value at once if the poller is running, never a stale one from
// an earlier listening session, and then every new value.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http_server/message.hpp"
#include "zeusd/cpu_fleet.hpp"
#include "zeusd/gpu_fleet.hpp"
#include "zeusd/http_types.hpp"

namespace zeus::zeusd {

class DeviceChannel;

enum class StreamKind { GpuPower, CpuPower };

// Called from poller threads with one event's JSON; must not block.
using http_server::EventSink;

// Unsubscribes on destruction.
class Subscription : public http_server::EventSubscription {
  public:
    Subscription(std::vector<std::shared_ptr<DeviceChannel>> channels, std::uint64_t id);
    ~Subscription() override;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

  private:
    std::vector<std::shared_ptr<DeviceChannel>> channels_;
    std::uint64_t id_;
};

class PowerStreams {
  public:
    PowerStreams(GpuFleet* gpus, CpuFleet* cpus, double gpu_poll_hz, double cpu_poll_hz);
    ~PowerStreams();
    PowerStreams(const PowerStreams&) = delete;
    PowerStreams& operator=(const PowerStreams&) = delete;

    // `ids` must be valid for the kind (the router checks).
    [[nodiscard]] std::unique_ptr<Subscription> subscribe(StreamKind kind, const std::vector<unsigned>& ids,
                                                          EventSink sink);
    // How many pollers are running now (for tests of the demand-driven behaviour).
    [[nodiscard]] std::size_t active_pollers() const;

  private:
    std::vector<std::shared_ptr<DeviceChannel>> gpu_channels_;
    std::vector<std::shared_ptr<DeviceChannel>> cpu_channels_;
};

// A power stream the router accepted, for the HTTP server to subscribe to
// once the response header is sent. `streams` may be null (no pollers, as
// in the fuzzer): the stream then ends at once.
class PowerStreamSource : public http_server::EventSource {
  public:
    PowerStreamSource(PowerStreams* streams, StreamKind kind, std::vector<unsigned> ids)
        : streams_(streams), kind_(kind), ids_(std::move(ids)) {}

    [[nodiscard]] std::unique_ptr<http_server::EventSubscription> subscribe(EventSink sink) override;
    [[nodiscard]] StreamKind kind() const { return kind_; }
    [[nodiscard]] const std::vector<unsigned>& ids() const { return ids_; }

  private:
    PowerStreams* streams_;
    StreamKind kind_;
    std::vector<unsigned> ids_;
};

}  // namespace zeus::zeusd
