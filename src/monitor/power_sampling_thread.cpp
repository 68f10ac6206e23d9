#include "monitor/power_sampling_thread.hpp"

#include <time.h>

namespace zeus::monitor_detail {

namespace {

std::int64_t thread_cpu_time_ns() {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

void SamplingThread::start(std::chrono::nanoseconds period, std::function<void()> sweep) {
    period_ = period;
    sweep_ = std::move(sweep);
    running_.store(true, std::memory_order_release);
    thread_ = std::thread([this] { run(); });
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [this] { return first_sweep_done_; });
}

void SamplingThread::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    running_.store(false, std::memory_order_release);
}

void SamplingThread::run() {
    using Clock = std::chrono::steady_clock;
    auto next = Clock::now();
    sweep_();
    cpu_time_ns_.store(thread_cpu_time_ns(), std::memory_order_relaxed);
    std::unique_lock lock(mutex_);
    first_sweep_done_ = true;
    wake_.notify_all();
    for (;;) {
        next += period_;
        const auto now = Clock::now();
        if (next < now) next = now;  // a sweep overran: start the next one at once, no catch-up burst
        if (wake_.wait_until(lock, next, [this] { return stopping_; })) break;
        lock.unlock();
        sweep_();
        cpu_time_ns_.store(thread_cpu_time_ns(), std::memory_order_relaxed);
        lock.lock();
    }
}

}  // namespace zeus::monitor_detail
