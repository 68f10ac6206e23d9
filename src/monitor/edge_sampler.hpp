// Sampled window edges (EnergyMonitorOptions::edges = WindowEdges::Sampled):
// one thread reads each counter GPU's energy snapshot just after its counter
// refreshes and publishes all of them as one immutable frame. A window edge
// then costs a clock reading and a frame pointer; it never calls the driver.
//
// The counter's refresh period is inferred per GPU from the refresh times the
// driver reports (two refreshes seen while reading every few milliseconds);
// from then on each GPU is read `kReadMargin` after its next expected refresh,
// and again shortly after if it had not refreshed yet. So the cached counter
// is as fresh as a synchronous read except in the margin after each refresh.
// CPU packages (RAPL) and the SoC, whose counters have no refresh time to
// follow, are read every few milliseconds on the same thread and carry the
// power since their previous reading: an edge extrapolates them with it
// (monitor/host_edges.hpp).
// Real clock only (on the simulator's virtual clock nothing refreshes while a
// thread waits).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "monitor/counter_watch.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"

namespace zeus::monitor_detail {

class EdgeSampler {
  public:
    using WallClock = std::chrono::system_clock;

    struct GpuSample {
        std::optional<EnergySnapshot> snapshot;  // nullopt: the latest read failed (`error` says why)
        std::string error;
        std::optional<CounterStats> stats;
        CounterWatch::GpuView watched;  // the counter watch's view when this was read
        WallClock::time_point read_at{};
        // An edge after this finds the sample late: the watcher missed its
        // next read by more than the counter's period allows (it stalled, or
        // hangs in a driver call), so the GPU may have failed unseen since.
        // Never for a failed read: that GPU is lost at the edge.
        WallClock::time_point late_after{};
        // Set when an edge read the GPU itself because the watcher's sample
        // was late: by how much.
        std::optional<std::chrono::nanoseconds> read_at_edge_late_by;
    };
    // A GPU's sample as a sampled edge computes with it in the usual case
    // (read, its counter not stuck), packed: tallying a window at its end
    // reads these 40 bytes per GPU and edge, not the whole sample.
    struct PlainGpu {
        bool plain = false;         // false: an edge takes the sample itself (sampled_gpu_edges.cpp)
        bool extrapolates = false;  // the snapshot has a power reading to extrapolate with
        Joules energy{0.0};         // the counter at its refresh
        Watts power{0.0};
        WallClock::time_point refreshed_at{};  // the read's time where the driver gives none
        Joules compensation{0.0};              // the counter watch's at the read
    };
    // A CPU package and its DRAM as last read.
    struct PackageSample {
        std::optional<CpuEnergy> energy;  // the latest good reading; nullopt before one
        Timestamp read_at{};              // of `energy`: the middle of its read
        std::string error;                // set when the latest read failed: the package is lost at an edge
        // From the previous good read to this one: the power an edge
        // extrapolates with (nullopt until two reads were good).
        std::optional<Watts> package_power;
        std::optional<Watts> dram_power;
    };
    // The SoC's metrics as last read.
    struct SocSample {
        std::optional<SocEnergy> energy;  // nullopt: the latest read failed (`error` says why)
        std::string error;
        Timestamp read_at{};
        // Per entry of energy->metrics: its rails' latest power readings
        // summed, which the SoC's own integration holds until its next
        // reading (nullopt when a rail's reading failed).
        std::vector<std::optional<Watts>> power;
    };
    // Devices read besides the GPUs; they must outlive the sampler.
    struct HostDevices {
        std::vector<const Cpu*> cpus;
        const Soc* soc = nullptr;
    };
    struct Frame {
        std::vector<GpuSample> gpus;  // positions follow the sampler's GPU list
        std::vector<PlainGpu> plain;  // each of `gpus` packed (plain_of), in the same positions
        std::vector<PackageSample> cpus;  // positions follow HostDevices::cpus
        std::optional<SocSample> soc;     // when HostDevices::soc is set (after the first read)
        std::uint64_t sequence = 0;
        // The earliest of the GPUs' late_after: an edge before it needs no
        // GPU's own check.
        WallClock::time_point earliest_late = WallClock::time_point::max();
        // Both clocks, read together when the frame was published: an edge
        // reads only the steady clock and takes its wall time (what the
        // driver's refresh times are on) from these.
        Timestamp steady_at{};
        WallClock::time_point wall_at{};
        [[nodiscard]] WallClock::time_point wall_time(Timestamp t) const {
            return wall_at + std::chrono::duration_cast<WallClock::duration>(t - steady_at);
        }
    };

    // `watch` may be null; it must outlive the sampler, which hands it every
    // read (one thread reads the counters for both).
    EdgeSampler(const Gpus& gpus, std::vector<unsigned> gpu_indices, CounterWatch* watch, HostDevices host);
    EdgeSampler(const EdgeSampler&) = delete;
    EdgeSampler& operator=(const EdgeSampler&) = delete;
    ~EdgeSampler() { stop(); }

    // Starts the thread (once); returns when its first frame is published.
    void start();
    // Wakes and joins the thread; the last frame stays. Idempotent.
    void stop();
    // The latest frame (never null after start()).
    [[nodiscard]] std::shared_ptr<const Frame> latest() const {
        std::lock_guard lock(frame_mutex_);
        return frame_;
    }
    // `frame` as an edge at `edge` must take it: each GPU whose sample is
    // late there (GpuSample::late_after) read now on the caller's thread, so
    // that a GPU that failed while the watcher was stalled is lost at the
    // edge, as a synchronous read finds it. `frame` itself when none is late
    // (one comparison).
    [[nodiscard]] std::shared_ptr<const Frame> at_edge(std::shared_ptr<const Frame> frame,
                                                       WallClock::time_point edge) const;

    // `sample` packed as a frame's `plain` holds it.
    [[nodiscard]] static PlainGpu plain_of(const GpuSample& sample);

  private:
    struct Schedule {
        WallClock::time_point due{};
        std::optional<WallClock::time_point> last_refresh;
        std::optional<WallClock::duration> period;
        bool probing = false;  // the previous read found no new refresh
    };
    void run();
    // Reads the GPUs that are due, publishes a frame if any was read, and
    // returns when the next one is due.
    WallClock::time_point sweep();
    void reschedule(Schedule& s, const GpuSample& sample, WallClock::time_point now);
    // GPU `k` read now (its snapshot or why not, and its counter's stats).
    // `observe`: hand the read to the counter watch (the watcher's own reads
    // only, which reach it in order; an edge's read takes the watch's view).
    [[nodiscard]] GpuSample read_gpu(std::size_t k, bool observe) const;
    // The host devices that are due, read into `next` (a copy of the latest frame).
    void read_packages(Frame& next) const;
    void read_soc(Frame& next) const;
    void publish(std::shared_ptr<Frame> next);

    const Gpus& gpus_;
    std::vector<unsigned> indices_;
    CounterWatch* watch_;
    HostDevices host_;
    std::vector<Schedule> schedule_;  // the thread's own
    WallClock::time_point packages_due_{};  // the thread's own, as the schedule
    WallClock::time_point soc_due_{};
    std::vector<std::shared_ptr<const Frame>> retired_;  // the thread's own: frames it published before the latest
    mutable std::mutex frame_mutex_;
    std::shared_ptr<const Frame> frame_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool started_ = false;
    std::atomic<bool> ready_{false};  // the first frame is out: read without the lock at every window edge
    bool stopping_ = false;
    bool first_frame_ = false;
    std::thread thread_;
};

}  // namespace zeus::monitor_detail
