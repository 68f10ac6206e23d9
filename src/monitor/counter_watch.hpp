// Keeps an eye on GPU energy counters while energy windows are open: reads
// each counter and the instant power every `period` (or is handed the edge
// sampler's reads, so one thread reads the counters), so that
//  - a counter that stops while the power says the GPU draws energy (a stuck
//    counter) is noticed, and the energy from when it stopped is the power
//    integrated instead; so is one that refuses to be read (NOT_SUPPORTED)
//    while the GPU still answers for its power, from its last good read;
//  - a counter that restarts (driver reload) loses at most one period: the
//    energy between the last read and the restart, which the counter no
//    longer holds, is the power integrated over that period minus what the
//    counter counted since the restart.
// Windows read `compensation` at both edges: the energy to add to the
// counter's difference; it also counts the times a GPU stopped answering and
// came back, for the windows to warn about; while a counter is stuck they add the energy since
// the watch's last read themselves (up to one period). Real clock only (on the simulator's virtual clock no
// thread can watch while time jumps).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "monitor/power_sampling_thread.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/monitor/power_monitor.hpp"

namespace zeus::monitor_detail {

class CounterWatch {
  public:
    struct GpuView {
        Joules compensation{0.0};           // energy the counter missed, cumulative
        std::uint64_t restarts_covered = 0;  // restarts whose lost energy is in `compensation`
        std::optional<Timestamp> stuck_since;  // the counter has not moved since then while power flowed
        Timestamp read_at{};                   // the watch's last read: `compensation` runs up to it
        Watts power{0.0};                      // the instant power then
        // The counter at the last good read and its lag behind that read: what
        // stands in for a counter that refuses to be read (NOT_SUPPORTED).
        std::optional<Millijoules> counter;
        Joules lag{0.0};
        // Why the counter refuses to be read, while it does (the GPU still
        // answers for its power): stuck from its last good read.
        std::optional<std::string> refused;
        // Times the GPU stopped answering and came back (lost for a while),
        // and how long the last such outage lasted: its counter kept
        // counting, but a window that spans one should say so.
        std::uint64_t outages = 0;
        std::chrono::nanoseconds longest_outage{0};
    };

    // `period`: how often its own thread reads every counter; zero: no
    // thread of its own, the owner (the edge sampler, which reads the
    // counters anyway) hands it every read through observe().
    CounterWatch(const Gpus& gpus, std::vector<unsigned> gpu_indices, std::chrono::nanoseconds period);
    CounterWatch(const CounterWatch&) = delete;
    CounterWatch& operator=(const CounterWatch&) = delete;
    ~CounterWatch() { stop(); }

    // Starts the thread (once; none with a zero period); returns after its first round of reads.
    void start();
    // One read of GPU `gpu`'s counter (and instant power, where the read lacks it).
    void observe(unsigned gpu, const Result<EnergySnapshot>& snapshot);
    [[nodiscard]] GpuView view(unsigned gpu) const;
    // Joins the thread; views stay as last read. Idempotent.
    void stop() { thread_.stop(); }

  private:
    // One good read of a GPU, taken without the lock.
    struct Reading {
        Joules counter{0.0};
        Watts power{0.0};
        std::uint64_t resets = 0;
        Joules lag{0.0};  // the counter's lag behind the read (power × time since its refresh)
    };
    struct State {
        bool have_read = false;
        Joules counter{0.0};         // accumulated counter at the last read
        Watts power{0.0};            // instant power at the last read
        Timestamp read_at{};         // when
        Timestamp counter_moved_at{};  // the counter last changed (or the first read)
        Joules lag_at_move{0.0};       // the counter's lag behind that read (power × time since its refresh)
        Joules power_since_move{0.0};  // power integrated since then
        Joules stuck_compensation{0.0};  // part of `compensation` added while stuck
        std::uint64_t resets = 0;
        std::optional<Timestamp> unanswered_since;  // reads fail since then
        GpuView view;

        // What a read tells, by what the counter did since the last one.
        void note_answered(Timestamp now);  // a GPU that answers again ends an outage
        void first_read(const Reading& r, Timestamp now);
        void restarted(const Reading& r, Timestamp now, Joules uncounted);
        void moved(const Reading& r, Timestamp now, Joules counted);
        // `stopped`: known to have stopped (it refuses to be read), without the wait.
        void stood_still(Timestamp now, Joules drawn, bool stopped = false);
        // What every good read leaves behind, the first included.
        void remember_read(Joules at_counter, Watts at_power, Timestamp at) {
            counter = at_counter;
            power = at_power;
            read_at = at;
            view.read_at = at;
            view.power = at_power;
        }
        // What a good read leaves for a counter that refuses later, which it no longer does.
        void keep_good_read(Millijoules at_counter, Joules at_lag) {
            view.counter = at_counter;
            view.lag = at_lag;
            view.refused.reset();
        }
    };
    void sweep();
    // A read where the counter refused (NOT_SUPPORTED) but the GPU answered
    // with its power `power`: the counter stands still from its last good read.
    void counter_refused(unsigned i, Timestamp now, Watts power, std::string why);
    [[nodiscard]] Reading reading_of(unsigned i, const EnergySnapshot& snapshot) const;

    const Gpus& gpus_;
    std::vector<unsigned> indices_;
    std::chrono::nanoseconds period_;
    mutable std::mutex mutex_;
    std::map<unsigned, State> states_;
    std::atomic<bool> started_{false};  // read without the lock at every window edge
    SamplingThread thread_;
};

}  // namespace zeus::monitor_detail
