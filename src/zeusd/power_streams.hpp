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

#include "zeusd/cpu_fleet.hpp"
#include "zeusd/gpu_fleet.hpp"
#include "zeusd/http_types.hpp"

namespace zeus::zeusd {

class DeviceChannel;

// Called from poller threads with one event's JSON; must not block.
using EventSink = std::function<void(const std::string& event_json)>;

// Unsubscribes on destruction.
class Subscription {
  public:
    Subscription(std::vector<std::shared_ptr<DeviceChannel>> channels, std::uint64_t id);
    ~Subscription();
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

}  // namespace zeus::zeusd
