#include "zeusd/power_streams.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeusd/log.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {
namespace {

std::uint64_t now_ms() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

std::chrono::microseconds period_of(double hz) {
    return std::chrono::microseconds(static_cast<std::int64_t>(1e6 / hz));
}

std::atomic<std::uint64_t> next_subscription_id{1};

// A device that fails every poll (a lost GPU polled at 20 Hz) must not write
// 20 warnings a second: log when it starts failing, when the failure
// changes, and when it works again. Used only by its channel's thread.
class PollHealth {
  public:
    explicit PollHealth(std::string what) : what_(std::move(what)) {}

    void failed(const Error& error) {
        auto text = error.describe();
        ++failures_;
        if (failing_ && text == last_error_) return;
        log::warn("{} failed: {} (logged again only when this changes or the device recovers)", what_, text);
        failing_ = true;
        last_error_ = std::move(text);
    }
    void succeeded() {
        if (!failing_) return;
        log::info("{} works again after {} failed polls", what_, failures_);
        failing_ = false;
        failures_ = 0;
        last_error_.clear();
    }

  private:
    std::string what_;
    bool failing_ = false;
    std::size_t failures_ = 0;
    std::string last_error_;
};

}  // namespace

// One device's poller and its subscribers.
class DeviceChannel {
  public:
    // Returns the event JSON for this period, or nullopt to publish nothing.
    using Poll = std::function<std::optional<std::string>(bool new_session)>;

    DeviceChannel(std::string name, std::chrono::microseconds period, Poll poll)
        : name_(std::move(name)), period_(period), poll_(std::move(poll)), thread_([this] { run(); }) {}

    ~DeviceChannel() {
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }

    void add(std::uint64_t id, EventSink sink) {
        std::optional<std::string> latest;
        {
            const std::lock_guard lock(mutex_);
            if (running_) latest = latest_;
            sinks_.emplace(id, sink);
        }
        wake_.notify_all();
        if (latest) sink(*latest);
    }

    void remove(std::uint64_t id) {
        const std::lock_guard lock(mutex_);
        sinks_.erase(id);
    }

    [[nodiscard]] bool running() const {
        const std::lock_guard lock(mutex_);
        return running_;
    }

  private:
    void run() {
        std::unique_lock lock(mutex_);
        while (true) {
            wake_.wait(lock, [this] { return stopping_ || !sinks_.empty(); });
            if (stopping_) return;
            bool new_session = false;
            if (!running_) {
                running_ = true;
                new_session = true;
                latest_.reset();
                log::debug("{} poller started", name_);
            }
            lock.unlock();
            auto event = poll_(new_session);
            lock.lock();
            if (event && event != latest_) {
                latest_ = event;
                for (const auto& [id, sink] : sinks_) sink(*event);
            }
            wake_.wait_for(lock, period_, [this] { return stopping_ || sinks_.empty(); });
            if (sinks_.empty() && running_) {
                running_ = false;
                log::debug("{} poller paused", name_);
            }
        }
    }

    std::string name_;
    std::chrono::microseconds period_;
    Poll poll_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::map<std::uint64_t, EventSink> sinks_;
    std::optional<std::string> latest_;
    bool running_ = false;
    bool stopping_ = false;
    std::thread thread_;  // last: starts after the members it uses
};

Subscription::Subscription(std::vector<std::shared_ptr<DeviceChannel>> channels, std::uint64_t id)
    : channels_(std::move(channels)), id_(id) {}

Subscription::~Subscription() {
    for (const auto& channel : channels_) channel->remove(id_);
}

PowerStreams::PowerStreams(GpuFleet* gpus, CpuFleet* cpus, double gpu_poll_hz, double cpu_poll_hz) {
    if (gpus != nullptr) {
        for (unsigned id = 0; id < gpus->size(); ++id) {
            // Dedup compares the whole event, so a new timestamp alone must
            // not count as a change: keep the last power and compare that.
            auto last = std::make_shared<std::optional<std::int64_t>>();
            auto health = std::make_shared<PollHealth>(fmt::format("GPU {} power poll", id));
            gpu_channels_.push_back(std::make_shared<DeviceChannel>(
                "GPU " + std::to_string(id), period_of(gpu_poll_hz),
                [gpus, id, last, health](bool first) -> std::optional<std::string> {
                    if (first) last->reset();
                    auto reading = gpus->gpu(id).power(PowerDomain::DeviceInstant);
                    if (!reading) {
                        health->failed(reading.error());
                        return std::nullopt;
                    }
                    health->succeeded();
                    const auto mw = reading.value().power.count();
                    if (*last == mw) return std::nullopt;
                    *last = mw;
                    return json_text(nlohmann::json{{"timestamp_ms", now_ms()}, {"gpu_id", id}, {"power_mw", mw}});
                }));
        }
    }
    if (cpus != nullptr) {
        const auto period = period_of(cpu_poll_hz);
        for (unsigned id = 0; id < cpus->size(); ++id) {
            struct State {
                std::optional<CpuEnergyReading> previous;
                std::optional<CpuPowerReading> last;
            };
            auto state = std::make_shared<State>();
            auto health = std::make_shared<PollHealth>(fmt::format("CPU {} energy poll", id));
            cpu_channels_.push_back(std::make_shared<DeviceChannel>(
                "CPU " + std::to_string(id), period,
                [cpus, id, state, period, health](bool first) -> std::optional<std::string> {
                    if (first) *state = State{};
                    auto reading = cpus->energy(id, true, true);
                    if (!reading) {
                        health->failed(Error{ErrorCode::Unknown, reading.error().describe(), ""});
                        return std::nullopt;
                    }
                    health->succeeded();
                    const auto previous = state->previous;
                    state->previous = reading.value();
                    if (!previous) return std::nullopt;  // the baseline
                    const auto power = power_between(*previous, reading.value(), period);
                    if (state->last && state->last->cpu_mw == power.cpu_mw && state->last->dram_mw == power.dram_mw) {
                        return std::nullopt;
                    }
                    state->last = power;
                    nlohmann::json event{{"timestamp_ms", now_ms()}, {"cpu_id", id}, {"cpu_mw", power.cpu_mw}};
                    event["dram_mw"] = power.dram_mw ? nlohmann::json(*power.dram_mw) : nlohmann::json(nullptr);
                    return json_text(event);
                }));
        }
    }
}

PowerStreams::~PowerStreams() = default;

std::unique_ptr<Subscription> PowerStreams::subscribe(StreamKind kind, const std::vector<unsigned>& ids,
                                                      EventSink sink) {
    const auto& all = kind == StreamKind::GpuPower ? gpu_channels_ : cpu_channels_;
    std::vector<std::shared_ptr<DeviceChannel>> chosen;
    for (const auto id : ids) chosen.push_back(all.at(id));
    const auto subscription_id = next_subscription_id.fetch_add(1);
    for (const auto& channel : chosen) channel->add(subscription_id, sink);
    return std::make_unique<Subscription>(std::move(chosen), subscription_id);
}

std::size_t PowerStreams::active_pollers() const {
    std::size_t count = 0;
    for (const auto& channel : gpu_channels_) count += channel->running() ? 1 : 0;
    for (const auto& channel : cpu_channels_) count += channel->running() ? 1 : 0;
    return count;
}

std::unique_ptr<http_server::EventSubscription> PowerStreamSource::subscribe(EventSink sink) {
    if (streams_ == nullptr) return nullptr;
    return streams_->subscribe(kind_, ids_, std::move(sink));
}

}  // namespace zeus::zeusd
