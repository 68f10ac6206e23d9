#include "zeus/attribution/window_shares.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "device/simulator_clock.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus::attribution {

ShareTarget ShareTarget::this_process() { return ShareTarget{Kind::Process, {}}; }
ShareTarget ShareTarget::this_process_tree() { return ShareTarget{Kind::ProcessTree, {}}; }
ShareTarget ShareTarget::processes(std::vector<std::uint32_t> pids) { return ShareTarget{Kind::Pids, std::move(pids)}; }

std::string ShareTarget::describe() const {
    const std::string root = pids.empty() ? std::string("this process") : fmt::format("process {}", pids.front());
    switch (kind) {
        case Kind::Process:
            return root;
        case Kind::ProcessTree:
            return root + " and its descendants";
        case Kind::Pids:
            return fmt::format("process{} {}", pids.size() == 1 ? "" : "es", fmt::join(pids, ", "));
    }
    return root;
}

std::int64_t WindowShare::others_mj() const {
    std::int64_t sum = 0;
    for (const Share& share : processes) {
        if (!std::binary_search(pids.begin(), pids.end(), share.pid)) sum += share.energy_mj();
    }
    return sum;
}

namespace {

// The parent of `pid` from <proc>/<pid>/stat (the field after the command,
// which is in parentheses and may hold any character); nullopt when it ended.
std::optional<std::uint32_t> parent_of(const std::filesystem::path& proc_root, std::uint32_t pid) {
    std::ifstream in(proc_root / std::to_string(pid) / "stat");
    std::stringstream text;
    text << in.rdbuf();
    const std::string stat = text.str();
    const auto close = stat.rfind(')');
    if (!in || close == std::string::npos) return std::nullopt;
    // ") S 123 ..." : state, then the parent.
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    std::uint32_t parent = 0;
    if (!(rest >> state >> parent)) return std::nullopt;
    return parent;
}

// Whether `pid` is `root` or below it. A process that ended before it was
// looked at is not (its parent is unknown).
bool descends_from(const std::filesystem::path& proc_root, std::uint32_t pid, std::uint32_t root) {
    for (int depth = 0; depth < 256 && pid > 1; ++depth) {  // a bound against a cycle in a fake tree
        if (pid == root) return true;
        const auto parent = parent_of(proc_root, pid);
        if (!parent) return false;
        pid = *parent;
    }
    return pid == root;
}

bool permanently_unsupported(const Error& error) {
    return error.code == ErrorCode::NotSupported || error.code == ErrorCode::FunctionNotFound;
}

// What one window gathered on one GPU.
struct WindowGpu {
    std::map<std::uint32_t, std::uint64_t> weights;  // pid -> Σ sm_util over the window's samples
    std::vector<std::string> warnings;

    void warn(const std::string& line) {
        if (std::find(warnings.begin(), warnings.end(), line) == warnings.end()) warnings.push_back(line);
    }
};

struct OpenWindow {
    std::vector<WindowGpu> gpus;              // positions follow gpu_indices_
    std::map<std::uint32_t, bool> is_target;  // every pid seen, decided when first seen
};

// The driver's per-GPU state shared by the windows.
struct GpuFeed {
    std::uint64_t last_seen_us = 0;
    std::optional<Error> no_running;      // said NotSupported once: not asked again
    std::optional<Error> no_utilization;  // likewise
};

class WindowSharesImpl final : public WindowShares {
  public:
    WindowSharesImpl(const Gpus& gpus, std::vector<unsigned> gpu_indices, WindowSharesOptions options, bool poll)
        : source_(gpus),
          gpu_indices_(std::move(gpu_indices)),
          options_(std::move(options)),
          feeds_(gpu_indices_.size()),
          poll_(poll && options_.poll_period.count() > 0) {}

    ~WindowSharesImpl() override { stop_thread(); }

    void begin(std::string_view name) override {
        std::lock_guard lock(mutex_);
        refresh();  // what came before belongs to the windows already open
        windows_[std::string(name)] = OpenWindow{std::vector<WindowGpu>(gpu_indices_.size()), {}};
        if (poll_ && !thread_.joinable() && !stopped_) thread_ = std::thread([this] { poll_loop(); });
    }

    Result<std::map<unsigned, WindowShare>> end(std::string_view name, const Measurement& measured) override {
        std::lock_guard lock(mutex_);
        auto it = windows_.find(std::string(name));
        if (it == windows_.end()) {
            return Error{ErrorCode::NotFound, fmt::format("no window '{}' is open for the energy shares", name),
                         "begin the window before ending it", 0};
        }
        refresh();
        OpenWindow window = std::move(it->second);
        windows_.erase(it);
        std::map<unsigned, WindowShare> out;
        for (std::size_t k = 0; k < gpu_indices_.size(); ++k) {
            const auto value = measured.gpu_energy.find(gpu_indices_[k]);
            if (value == measured.gpu_energy.end()) continue;
            out.emplace(gpu_indices_[k], split(k, window, value->second, measured.time.count()));
        }
        return out;
    }

    void cancel(std::string_view name) override {
        std::lock_guard lock(mutex_);
        windows_.erase(std::string(name));
    }

    void reset() override {
        std::lock_guard lock(mutex_);
        windows_.clear();
    }

    void stop_thread() override {
        {
            std::lock_guard lock(mutex_);
            stopped_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    [[nodiscard]] const ShareTarget& target() const override { return options_.target; }

  private:
    void poll_loop() {
        std::unique_lock lock(mutex_);
        while (!stopped_) {
            wake_.wait_for(lock, options_.poll_period, [this] { return stopped_; });
            if (!stopped_ && !windows_.empty()) refresh();
        }
    }

    // Reads each GPU's running processes and the utilization samples since
    // the last read into every open window. Under mutex_.
    void refresh() {
        if (windows_.empty()) {
            // Nobody to give samples to: only move last_seen past them.
            for (std::size_t k = 0; k < gpu_indices_.size(); ++k) skip_samples(k);
            return;
        }
        for (std::size_t k = 0; k < gpu_indices_.size(); ++k) {
            std::vector<std::uint32_t> running = read_running(k);
            std::vector<ProcessUtilizationSample> samples = read_samples(k);
            for (auto& [name, window] : windows_) {
                WindowGpu& gpu = window.gpus[k];
                for (std::uint32_t pid : running) {
                    gpu.weights.emplace(pid, 0);
                    classify(window, pid);
                }
                for (const ProcessUtilizationSample& sample : samples) {
                    gpu.weights[sample.pid] += sample.sm_util;
                    classify(window, sample.pid);
                }
                for (const std::string& line : errors_) gpu.warn(line);
            }
            errors_.clear();
        }
    }

    void skip_samples(std::size_t k) {
        GpuFeed& feed = feeds_[k];
        if (feed.no_utilization) return;
        auto samples = source_.process_utilization(gpu_indices_[k], feed.last_seen_us);
        if (samples) feed.last_seen_us = std::max(feed.last_seen_us, samples->last_seen_us);
    }

    std::vector<std::uint32_t> read_running(std::size_t k) {
        GpuFeed& feed = feeds_[k];
        std::vector<std::uint32_t> pids;
        if (feed.no_running) return pids;
        auto running = source_.running_processes(gpu_indices_[k]);
        if (!running) {
            note(running.error());
            if (permanently_unsupported(running.error())) feed.no_running = running.error();
            return pids;
        }
        for (const GpuProcess& process : *running) pids.push_back(process.pid);
        return pids;
    }

    std::vector<ProcessUtilizationSample> read_samples(std::size_t k) {
        GpuFeed& feed = feeds_[k];
        if (feed.no_utilization) return {};
        auto samples = source_.process_utilization(gpu_indices_[k], feed.last_seen_us);
        if (!samples) {
            // NVML's NOT_FOUND: no sample newer than the last seen.
            if (samples.error().code == ErrorCode::NotFound) return {};
            note(samples.error());
            if (permanently_unsupported(samples.error())) feed.no_utilization = samples.error();
            return {};
        }
        feed.last_seen_us = std::max(feed.last_seen_us, samples->last_seen_us);
        return std::move(samples->samples);
    }

    void note(const Error& error) { errors_.push_back(error.describe()); }

    void classify(OpenWindow& window, std::uint32_t pid) {
        if (window.is_target.contains(pid)) return;
        window.is_target[pid] = is_target(pid);
    }

    bool is_target(std::uint32_t pid) const {
        const ShareTarget& target = options_.target;
        switch (target.kind) {
            case ShareTarget::Kind::Process:
                return pid == target.pids.front();
            case ShareTarget::Kind::ProcessTree:
                return descends_from(options_.proc_root, pid, target.pids.front());
            case ShareTarget::Kind::Pids:
                return std::find(target.pids.begin(), target.pids.end(), pid) != target.pids.end();
        }
        return false;
    }

    // The window's energy on GPU k split as one interval of `seconds`.
    WindowShare split(std::size_t k, const OpenWindow& window, const EnergyValue& value, double seconds) const {
        const WindowGpu& gathered = window.gpus[k];
        WindowShare out;
        out.gpu = gpu_indices_[k];
        out.warnings = gathered.warnings;
        const double joules = value.energy.count();
        out.gpu_mj = std::isfinite(joules) ? std::max<std::int64_t>(0, std::llround(joules * 1000.0)) : 0;
        const GpuFeed& feed = feeds_[k];
        if (value.lost || (feed.no_running && feed.no_utilization)) {
            // The reason first, then what the driver said.
            out.known = false;
            out.remainder.no_process_mj = out.gpu_mj;
            out.warnings.insert(out.warnings.begin(),
                                value.lost ? fmt::format("GPU {} was lost during the window: no share", out.gpu)
                                           : fmt::format("GPU {}: the driver gives no process data, so no share: "
                                                         "all of its energy is in the remainder",
                                                         out.gpu));
            return out;
        }
        IntervalInputs in;
        in.delta_mj = out.gpu_mj;
        in.idle_policy = options_.idle_policy;
        if (auto idle = options_.idle_power.find(out.gpu); idle != options_.idle_power.end()) {
            out.idle_power = idle->second;
            in.idle_estimate_mj = std::llround(static_cast<double>(idle->second.count()) * seconds);
        }
        for (const auto& [pid, weight] : gathered.weights) {
            in.pids.push_back(pid);
            // Whole samples of at most the type's range, adding up to the weight.
            for (std::uint64_t left = weight; left > 0;) {
                const auto part = static_cast<std::uint32_t>(
                    std::min<std::uint64_t>(left, std::numeric_limits<std::uint32_t>::max()));
                in.samples.push_back(ProcessUtilizationSample{pid, 0, part});
                left -= part;
            }
        }
        IntervalAttribution split = attribute_interval(in);
        out.processes = std::move(split.shares);
        out.remainder = split.remainder;
        for (const Share& share : out.processes) {
            if (!window.is_target.at(share.pid)) continue;
            out.pids.push_back(share.pid);
            out.share_mj += share.energy_mj();
            out.method = share.method;
        }
        if (out.pids.empty() && !out.processes.empty()) {
            out.warnings.push_back(fmt::format(
                "no process of {} was seen on GPU {} while {} other{} were: in a container without the host's PID "
                "namespace, the driver's PIDs are the host's (run it with the host's PID namespace)",
                options_.target.describe(), out.gpu, out.processes.size(), out.processes.size() == 1 ? "" : "s"));
        }
        return out;
    }

    GpusProcessSource source_;
    std::vector<unsigned> gpu_indices_;
    WindowSharesOptions options_;
    std::vector<GpuFeed> feeds_;
    std::vector<std::string> errors_;  // of the GPU being read, for the open windows
    std::map<std::string, OpenWindow, std::less<>> windows_;
    bool poll_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopped_ = false;
    std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<WindowShares>> WindowShares::open(const Gpus& gpus, std::vector<unsigned> gpu_indices,
                                                         WindowSharesOptions options) {
    for (unsigned index : gpu_indices) {
        if (index >= gpus.size()) {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("GPU index {} is out of range: {} GPU(s) are visible", index, gpus.size()),
                         "give GPU indices the energy monitor measures", 0};
        }
    }
    ShareTarget& target = options.target;
    if (target.kind == ShareTarget::Kind::Pids) {
        if (target.pids.empty()) {
            return Error{ErrorCode::InvalidArgument, "no process id was given for the energy shares",
                         "give at least one PID", 0};
        }
    } else if (target.pids.empty()) {
        target.pids = {static_cast<std::uint32_t>(::getpid())};
    }
    if (std::find(target.pids.begin(), target.pids.end(), 0U) != target.pids.end()) {
        return Error{ErrorCode::InvalidArgument, "process id 0 is not a process", "give PIDs of running processes", 0};
    }
    const bool poll = !SimulatorClock::virtual_clock_of(gpus).has_value();
    return std::unique_ptr<WindowShares>(
        std::make_unique<WindowSharesImpl>(gpus, std::move(gpu_indices), std::move(options), poll));
}

}  // namespace zeus::attribution
