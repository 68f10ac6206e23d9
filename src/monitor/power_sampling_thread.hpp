// The one background thread of a PowerMonitor or TemperatureMonitor: runs a
// sweep at a fixed rate (absolute schedule, so the rate does not drift by the
// sweep's own duration) until stopped, and records its own CPU time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace zeus::monitor_detail {

class SamplingThread {
  public:
    SamplingThread() = default;
    SamplingThread(const SamplingThread&) = delete;
    SamplingThread& operator=(const SamplingThread&) = delete;
    ~SamplingThread() { stop(); }

    // Starts the thread, which calls `sweep` at once and then every `period`.
    // Returns after the first sweep has finished, so a monitor has data as
    // soon as it exists.
    void start(std::chrono::nanoseconds period, std::function<void()> sweep);
    // Wakes and joins the thread; idempotent.
    void stop();

    [[nodiscard]] bool running() const { return running_.load(std::memory_order_acquire); }
    // CPU time the thread had used at the end of its latest sweep.
    [[nodiscard]] std::chrono::nanoseconds cpu_time() const {
        return std::chrono::nanoseconds(cpu_time_ns_.load(std::memory_order_relaxed));
    }

  private:
    void run();

    std::chrono::nanoseconds period_{0};
    std::function<void()> sweep_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    bool first_sweep_done_ = false;
    std::atomic<bool> running_{false};
    std::atomic<std::int64_t> cpu_time_ns_{0};
    std::thread thread_;
};

}  // namespace zeus::monitor_detail
