// A scriptable EnergyMonitor in the test's own process, for tests of what
// uses energy windows (the power-limit optimizer), as FakeGpu is for what
// uses GPUs. It watches fake GPUs (fake_gpu.hpp) that share one ManualClock:
// a window's time is how far the test moved that clock between the edges,
// and each GPU's energy the fake's counter difference, i.e. the power the
// test had it draw × the time it moved the clock. So the truth a test
// checks against is its own script, exact to the counter's 1 mJ.
//
// - A GPU whose read fails at either edge (lose(), or a scripted error) is
//   lost in that window: energy 0, `lost`, and a warning naming the GPU and
//   the error, as EnergyMonitor reports a GPU that stopped answering.
// - cancel = true closes a window with zero values, as EnergyMonitor does.
// - Every edge is recorded (`edges()`): begin, end or cancel, the window's
//   name, the clock's time, and the step the test last said it is in
//   (`mark_step`, e.g. a training loop's call number).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/fake_gpu.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::testing {

class FakeEnergyMonitor final : public EnergyMonitor {
  public:
    struct Edge {
        std::string what;  // "begin", "end" or "cancel"
        std::string name;
        int step;
        ManualClock::TimePoint at;
    };

    // Watches every GPU of `gpus` (fakes on `clock`); both must outlive it.
    FakeEnergyMonitor(const Gpus& gpus, std::shared_ptr<ManualClock> clock) : gpus_(gpus), clock_(std::move(clock)) {
        for (unsigned i = 0; i < gpus.size(); ++i) gpu_indices_.push_back(i);
    }

    // Edges from now on are recorded as made in `step`.
    void mark_step(int step) {
        const std::lock_guard lock(mutex_);
        step_ = step;
    }
    [[nodiscard]] std::vector<Edge> edges() const {
        const std::lock_guard lock(mutex_);
        return edges_;
    }
    // The edges of one kind ("begin", "end", "cancel"), in order.
    [[nodiscard]] std::vector<Edge> edges(std::string_view what) const {
        std::vector<Edge> out;
        for (auto& edge : edges()) {
            if (edge.what == what) out.push_back(std::move(edge));
        }
        return out;
    }

    // --- EnergyMonitor (with its default arguments, which an override hides) ---
    Status begin_window(std::string_view name, bool /*sync*/ = true, bool restart = false) override {
        const std::lock_guard lock(mutex_);
        const std::string key(name);
        if (open_.contains(key) && !restart) {
            return Error{ErrorCode::InvalidState, "window '" + key + "' is already open (fake monitor)", "", 0};
        }
        open_[key] = Begin{clock_->now(), read_all()};
        record("begin", key);
        return {};
    }
    Result<Measurement> end_window(std::string_view name, bool /*sync*/ = true, bool cancel = false) override {
        const std::lock_guard lock(mutex_);
        const auto it = open_.find(std::string(name));
        if (it == open_.end()) {
            return Error{ErrorCode::NotFound, "window '" + std::string(name) + "' is not open (fake monitor)", "", 0};
        }
        const Begin begin = std::move(it->second);
        open_.erase(it);
        record(cancel ? "cancel" : "end", std::string(name));
        Measurement m;
        m.start_time = WallClock::from_system(begin.at);
        m.time = Seconds(std::chrono::duration<double>(clock_->now() - begin.at).count());
        const auto end = read_all();
        for (const unsigned i : gpu_indices_) m.gpu_energy[i] = value(i, begin.energy.at(i), end.at(i), cancel);
        return m;
    }
    std::vector<std::string> reset_windows() override {
        const std::lock_guard lock(mutex_);
        std::vector<std::string> names;
        for (const auto& [name, begin] : open_) names.push_back(name);
        open_.clear();
        return names;
    }
    [[nodiscard]] std::vector<std::string> open_windows() const override {
        const std::lock_guard lock(mutex_);
        std::vector<std::string> names;
        for (const auto& [name, begin] : open_) names.push_back(name);
        return names;
    }
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return gpu_indices_; }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return cpu_indices_; }

  private:
    struct Begin {
        ManualClock::TimePoint at;
        std::map<unsigned, Result<Millijoules>> energy;
    };

    [[nodiscard]] std::map<unsigned, Result<Millijoules>> read_all() const {
        std::map<unsigned, Result<Millijoules>> energy;
        for (const unsigned i : gpu_indices_) energy.emplace(i, gpus_[i].total_energy());
        return energy;
    }
    static EnergyValue value(unsigned gpu, const Result<Millijoules>& begin, const Result<Millijoules>& end,
                             bool cancel) {
        EnergyValue v;
        if (cancel) return v;
        const Result<Millijoules>& failed = begin ? end : begin;
        if (!failed) {
            v.lost = true;
            v.warnings.push_back("GPU " + std::to_string(gpu) + " stopped answering: " + failed.error().message);
            return v;
        }
        v.energy = quantity_cast<Joules>(*end - *begin);
        return v;
    }
    void record(const char* what, std::string name) { edges_.push_back({what, std::move(name), step_, clock_->now()}); }

    const Gpus& gpus_;
    std::shared_ptr<ManualClock> clock_;
    std::vector<unsigned> gpu_indices_;
    std::vector<unsigned> cpu_indices_;
    mutable std::mutex mutex_;
    std::map<std::string, Begin> open_;
    std::vector<Edge> edges_;
    int step_ = 0;
};

}  // namespace zeus::testing
