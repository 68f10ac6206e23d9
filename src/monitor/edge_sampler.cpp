#include "monitor/edge_sampler.hpp"

#include <algorithm>
#include <utility>

namespace zeus::monitor_detail {
namespace {

using namespace std::chrono_literals;

// Before a GPU's refresh period is known, and after a read at the expected
// time found no new refresh: read again this soon (a tenth of the period,
// between these limits).
constexpr auto kMinRetry = std::chrono::milliseconds(1);
constexpr auto kMaxRetry = std::chrono::milliseconds(10);
constexpr auto kProbe = std::chrono::milliseconds(5);
// Read this long after the expected refresh: the driver publishes it a
// little after its timestamp.
constexpr auto kReadMargin = std::chrono::milliseconds(1);
// GPUs whose driver gives no refresh time (and failed reads): the counter
// watch's rate.
constexpr auto kBlindPeriod = std::chrono::milliseconds(100);
// No read is scheduled further ahead than this: the schedule is on the wall
// clock (the driver's refresh times are), and a clock stepped back must not
// leave the samples unread for as long as the step.
constexpr auto kMaxAhead = std::chrono::seconds(1);
// A GPU's sample is late once the watcher's next read of it is overdue by
// its counter's period (kBlindPeriod until that is known), and never less
// than this: on a busy machine a thread may wait that long for a core.
constexpr auto kMinLateness = std::chrono::milliseconds(50);
// CPU packages: RAPL counters move about every millisecond, with no refresh
// time to follow; an edge extrapolates at most this far, so its bound (the
// package's power ceiling × this at worst) stays near a synchronous read's
// own staleness. One powercap file read per zone each time: 200 a second.
constexpr auto kPackagePeriod = std::chrono::milliseconds(5);
// The SoC: a Jetson's rails are I2C reads (about a millisecond for all),
// and its values are integrated power anyway.
constexpr auto kSocPeriod = std::chrono::milliseconds(20);

// (after − before) / (t_after − t_before); nullopt without both or time between.
std::optional<Watts> power_between(std::optional<Joules> before, Timestamp t_before, std::optional<Joules> after,
                                   Timestamp t_after) {
    if (!before || !after || t_after <= t_before) return std::nullopt;
    return (*after - *before) / Seconds(t_after - t_before);
}

}  // namespace

EdgeSampler::EdgeSampler(const Gpus& gpus, std::vector<unsigned> gpu_indices, CounterWatch* watch, HostDevices host)
    : gpus_(gpus), indices_(std::move(gpu_indices)), watch_(watch), host_(std::move(host)), schedule_(indices_.size()) {
    auto empty = std::make_shared<Frame>();
    empty->gpus.resize(indices_.size());
    empty->plain.resize(indices_.size());
    empty->cpus.resize(host_.cpus.size());
    empty->steady_at = MonitorClock::now();
    empty->wall_at = WallClock::now();
    frame_ = std::move(empty);
}

void EdgeSampler::start() {
    if (ready_.load(std::memory_order_acquire)) return;
    std::unique_lock lock(mutex_);
    if (!started_) {
        started_ = true;
        thread_ = std::thread([this] { run(); });
    }
    wake_.wait(lock, [this] { return first_frame_; });
    ready_.store(true, std::memory_order_release);
}

void EdgeSampler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void EdgeSampler::run() {
    auto next = sweep();
    std::unique_lock lock(mutex_);
    first_frame_ = true;
    wake_.notify_all();
    for (;;) {
        // Sleep on the steady clock: the wall clock may be stepped.
        const auto delay = std::max(next - WallClock::now(), WallClock::duration::zero());
        if (wake_.wait_for(lock, delay, [this] { return stopping_; })) break;
        lock.unlock();
        next = sweep();
        lock.lock();
    }
}

EdgeSampler::WallClock::time_point EdgeSampler::sweep() {
    std::shared_ptr<Frame> next;
    const auto now = WallClock::now();
    for (std::size_t k = 0; k < indices_.size(); ++k) {
        if (schedule_[k].due > now + kMaxAhead) schedule_[k].due = now;
        if (schedule_[k].due > now) continue;
        if (!next) next = std::make_shared<Frame>(*latest());
        GpuSample sample = read_gpu(k, true);
        reschedule(schedule_[k], sample, sample.read_at);
        // A failed read is never late: the GPU is lost at the edge until the
        // watcher reads it again (an edge must not wait on a GPU that hangs).
        const auto allowed = std::max<WallClock::duration>(schedule_[k].period.value_or(kBlindPeriod), kMinLateness);
        sample.late_after = sample.snapshot ? schedule_[k].due + allowed : WallClock::time_point::max();
        next->plain[k] = plain_of(sample);
        next->gpus[k] = std::move(sample);
    }
    if (!host_.cpus.empty()) {
        if (packages_due_ > now + kMaxAhead) packages_due_ = now;
        if (packages_due_ <= now) {
            if (!next) next = std::make_shared<Frame>(*latest());
            read_packages(*next);
            packages_due_ = now + kPackagePeriod;
        }
    }
    if (host_.soc != nullptr) {
        if (soc_due_ > now + kMaxAhead) soc_due_ = now;
        if (soc_due_ <= now) {
            if (!next) next = std::make_shared<Frame>(*latest());
            read_soc(*next);
            soc_due_ = now + kSocPeriod;
        }
    }
    if (next) publish(std::move(next));
    auto earliest = now + kMaxAhead;
    for (const auto& s : schedule_) earliest = std::min(earliest, s.due);
    if (!host_.cpus.empty()) earliest = std::min(earliest, packages_due_);
    if (host_.soc != nullptr) earliest = std::min(earliest, soc_due_);
    return earliest;
}

EdgeSampler::GpuSample EdgeSampler::read_gpu(std::size_t k, bool observe) const {
    const Gpu& gpu = gpus_[indices_[k]];
    GpuSample sample;
    auto snapshot = gpu.energy_snapshot();
    sample.read_at = WallClock::now();
    if (snapshot) {
        sample.snapshot = *snapshot;
    } else {
        sample.error = snapshot.error().describe();
    }
    sample.stats = gpu.energy_counter_stats();
    if (watch_ != nullptr) {
        if (observe) watch_->observe(indices_[k], snapshot);
        sample.watched = watch_->view(indices_[k]);
    }
    return sample;
}

std::shared_ptr<const EdgeSampler::Frame> EdgeSampler::at_edge(std::shared_ptr<const Frame> frame,
                                                               WallClock::time_point edge) const {
    if (edge <= frame->earliest_late) return frame;
    auto read = std::make_shared<Frame>(*frame);
    for (std::size_t k = 0; k < read->gpus.size(); ++k) {
        GpuSample& sample = read->gpus[k];
        if (edge <= sample.late_after) continue;
        const auto late_by = std::chrono::duration_cast<std::chrono::nanoseconds>(edge - sample.late_after);
        sample = read_gpu(k, false);
        sample.read_at_edge_late_by = late_by;
        sample.late_after = WallClock::time_point::max();
        read->plain[k] = plain_of(sample);
    }
    read->earliest_late = WallClock::time_point::max();
    return read;
}

EdgeSampler::PlainGpu EdgeSampler::plain_of(const GpuSample& sample) {
    if (!sample.snapshot || sample.watched.stuck_since) return {};
    const EnergySnapshot& snapshot = *sample.snapshot;
    PlainGpu plain{true,
                   snapshot.power.has_value(),
                   quantity_cast<Joules>(snapshot.energy),
                   Watts(0.0),
                   snapshot.refreshed_at.value_or(sample.read_at),
                   sample.watched.compensation};
    if (snapshot.power) plain.power = quantity_cast<Watts>(*snapshot.power);
    return plain;
}

void EdgeSampler::read_packages(Frame& next) const {
    for (std::size_t k = 0; k < host_.cpus.size(); ++k) {
        PackageSample& sample = next.cpus[k];
        const auto before = MonitorClock::now();
        auto energy = host_.cpus[k]->total_energy();
        const auto read_at = before + (MonitorClock::now() - before) / 2;
        if (!energy) {
            sample.error = energy.error().describe();
            continue;
        }
        if (sample.energy) {
            sample.package_power = power_between(sample.energy->package, sample.read_at, energy->package, read_at);
            sample.dram_power = power_between(sample.energy->dram, sample.read_at, energy->dram, read_at);
        }
        sample.energy = std::move(energy).value();
        sample.read_at = read_at;
        sample.error.clear();
    }
}

void EdgeSampler::read_soc(Frame& next) const {
    SocSample sample;
    const auto before = MonitorClock::now();
    auto energy = host_.soc->total_energy();
    sample.read_at = before + (MonitorClock::now() - before) / 2;
    if (!energy) {
        sample.error = energy.error().describe();
        next.soc = std::move(sample);
        return;
    }
    const auto rails = host_.soc->rails();
    for (const auto& metric : energy->metrics) {
        std::optional<Watts> sum = Watts(0.0);
        for (const auto& rail : rails) {
            if (rail.metric != metric.metric) continue;
            if (!rail.power) {
                sum.reset();
                break;
            }
            *sum += *rail.power;
        }
        sample.power.push_back(sum);
    }
    sample.energy = std::move(energy).value();
    next.soc = std::move(sample);
}

void EdgeSampler::publish(std::shared_ptr<Frame> next) {
    next->earliest_late = WallClock::time_point::max();
    for (const auto& gpu : next->gpus) next->earliest_late = std::min(next->earliest_late, gpu.late_after);
    next->steady_at = MonitorClock::now();
    next->wall_at = WallClock::now();
    std::shared_ptr<const Frame> previous;
    {
        std::lock_guard lock(frame_mutex_);
        next->sequence = frame_->sequence + 1;
        previous = std::exchange(frame_, std::move(next));
    }
    // Windows and their results hold frames; whichever lets go last would
    // free one, an allocation per GPU: kept here, a frame is freed on this
    // thread once nothing else holds it (nothing else can take it again).
    retired_.push_back(std::move(previous));
    std::erase_if(retired_, [](const std::shared_ptr<const Frame>& f) { return f.use_count() == 1; });
}

void EdgeSampler::reschedule(Schedule& s, const GpuSample& sample, WallClock::time_point now) {
    if (!sample.snapshot || !sample.snapshot->refreshed_at) {
        s.due = now + kBlindPeriod;
        return;
    }
    const auto refreshed = *sample.snapshot->refreshed_at;
    const auto retry = [&] {
        if (!s.period) return WallClock::duration(kProbe);
        return std::clamp<WallClock::duration>(*s.period / 10, kMinRetry, kMaxRetry);
    };
    if (s.last_refresh && refreshed <= *s.last_refresh) {
        // Not refreshed yet: look again soon (we are probing for it).
        s.due = now + retry();
        s.probing = true;
        return;
    }
    // A read this late (the thread stalled, or a slow driver call on
    // another GPU held it) may have missed refreshes: its interval says
    // nothing about the period.
    const bool on_time = now - s.due <= kMinLateness;
    if (s.last_refresh && on_time) {
        // Any interval between two refreshes seen is a whole number of
        // periods; right after probing it is exactly one.
        const auto interval = refreshed - *s.last_refresh;
        s.period = s.probing || !s.period ? interval : std::min(*s.period, interval);
    }
    s.last_refresh = refreshed;
    s.probing = false;
    if (!s.period) {
        s.due = now + kProbe;
        return;
    }
    s.due = refreshed + *s.period + kReadMargin;
    if (s.due <= now) s.due = now + retry();
}

}  // namespace zeus::monitor_detail
