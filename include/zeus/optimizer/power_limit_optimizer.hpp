// Finds the GPU power limit that suits a training job while it trains (the
// original's GlobalPowerLimitOptimizer): every candidate limit, from the
// maximum down in `pl_step` steps, runs `warmup_steps` steps and is then
// measured over `profile_steps` steps; the optimum selector then picks one
// and training continues at it.
//
//   auto optimizer = zeus::optimizer::GlobalPowerLimitOptimizer::create(gpus, *monitor, {}).value();
//   for (int epoch = 0; epoch < epochs; ++epoch) {
//       optimizer->on_epoch_begin();
//       for (auto& batch : loader) {
//           optimizer->on_step_begin().value();   // may change the limit
//           train_step(batch);
//           optimizer->on_step_end();
//       }
//       optimizer->on_epoch_end().value();        // a half-profiled limit is retried next epoch
//   }
//   std::cout << optimizer->report().value().to_string();
//
// Unlike the original, the limit in force before create() comes back when
// the optimizer is closed or destroyed (and, when the GPUs are controlled
// through zeusd, when this process dies), and warmup_steps = 0 works.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "zeus/device/gpus.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/optimizer/optimum_selector.hpp"
#include "zeus/optimizer/power_limit_profile.hpp"
#include "zeus/optimizer/power_limit_report.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/profile/communicator.hpp"

namespace zeus::optimizer {

struct PowerLimitOptimizerOptions {
    // Null: ZeusCost(eta 0.5) over every GPU of every rank.
    SelectorPtr selector;
    std::size_t wait_steps = 1;     // steps at the maximum limit before profiling
    std::size_t warmup_steps = 10;  // steps at each limit before its window opens (0 allowed)
    std::size_t profile_steps = 40; // steps in each limit's window (> 0)
    Watts pl_step{25.0};            // distance between candidate limits (> 0)
    // The candidate limits themselves, in any order, each within the GPUs'
    // constraints (e.g. every limit a power trace was measured at, unevenly
    // spaced). Empty: from the maximum down in pl_step steps.
    std::vector<Watts> power_limits;
    // Existing file: its measurements are used and nothing is profiled.
    // Missing file: profiled, then saved there. nullopt: profiled, not saved.
    std::optional<std::filesystem::path> profile_path;
    // Several processes (one per GPU or per node): energy is summed over
    // every rank, time is the slowest rank's, and each rank sets its own
    // GPUs. Every rank must make the same calls. Null: this process only.
    profile::Communicator* communicator = nullptr;
    // Once profiled, how often on_step_begin/on_epoch_end ask the selector
    // whether its choice went stale (the carbon selector when the grid's
    // intensity moved) and, if so, select and set the limit again.
    Seconds reselect_period{60.0};
};

namespace state {
struct Ready {  // waiting: `steps` more on_step_begin calls before `next` is set
    Milliwatts next;
    std::size_t steps;
};
struct Warmup {
    Milliwatts limit;
    std::size_t steps;
};
struct Profiling {
    Milliwatts limit;
    std::size_t steps;
};
struct Done {
    Milliwatts optimal;
};
}  // namespace state
using PowerLimitState = std::variant<state::Ready, state::Warmup, state::Profiling, state::Done>;

class GlobalPowerLimitOptimizer {
  public:
    // Sets the monitored GPUs (monitor.gpu_indices()) to the maximum limit,
    // or to the optimum of an existing profile. Errors: bad options, GPUs
    // with different limit constraints, no permission to change the limit
    // (with the fixes), an unreadable profile, a profile path that cannot be
    // written. `gpus` and `monitor` must outlive the optimizer: its
    // destructor puts the limits back through them. With a communicator,
    // every rank must call it; when one rank
    // fails, every rank returns an error (none is left waiting).
    [[nodiscard]] static Result<std::unique_ptr<GlobalPowerLimitOptimizer>> create(const Gpus& gpus,
                                                                                  EnergyMonitor& monitor,
                                                                                  PowerLimitOptimizerOptions options = {});
    GlobalPowerLimitOptimizer(const GlobalPowerLimitOptimizer&) = delete;
    GlobalPowerLimitOptimizer& operator=(const GlobalPowerLimitOptimizer&) = delete;
    // close(), with any error printed on stderr.
    ~GlobalPowerLimitOptimizer();

    // Training hooks. on_step_begin drives profiling; on_epoch_end cancels a
    // limit's unfinished warm-up or window (it is retried from its warm-up
    // at the next step, the maximum limit is set meanwhile). When two epochs
    // in a row are too short to hold one limit's warm-up and window,
    // on_epoch_end ends profiling at the maximum limit and says so (the
    // original retries forever). A GPU lost during a window (on any rank)
    // ends profiling too: on_step_begin discards that window (its total
    // would lack the lost GPU's energy), warns, sets the maximum limit on
    // the GPUs that still answer and returns a GpuLost error naming the GPU.
    // The others do nothing and exist so that callers can wire every hook.
    Status on_epoch_begin() { return {}; }
    Status on_step_begin();
    Status on_step_end() { return {}; }
    Status on_epoch_end();

    // Puts back the limits in force before create(). Idempotent; the hooks
    // do nothing afterwards.
    Status close();

    [[nodiscard]] const PowerLimitState& state() const { return state_; }
    [[nodiscard]] bool done() const { return std::holds_alternative<state::Done>(state_); }
    // The chosen limit once done.
    [[nodiscard]] std::optional<Milliwatts> optimal_power_limit() const;
    // Candidates in profiling order (the maximum first).
    [[nodiscard]] const std::vector<Milliwatts>& candidates() const { return candidates_; }
    [[nodiscard]] const std::vector<PowerLimitMeasurement>& measurements() const { return measurements_; }
    [[nodiscard]] const SelectorPtr& selector() const { return selector_; }
    // What made a measurement less trustworthy (e.g. a window shorter than
    // the energy counter's update period), one line each.
    [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
    // How often the limit was selected again after profiling (a stale selector).
    [[nodiscard]] int reselections() const { return reselections_; }
    // GPUs whose energy the measurements sum, over every rank.
    [[nodiscard]] int world_size() const { return world_size_; }
    // The profile, the choice of this optimizer's selector and of `others`,
    // and what each saves against the maximum limit. NoData before any
    // limit was measured.
    [[nodiscard]] Result<PowerLimitReport> report(const std::vector<SelectorPtr>& others = {}) const;

  private:
    struct GpuControl {
        Gpu* gpu;
        Milliwatts before;  // restored by close()
    };
    GlobalPowerLimitOptimizer(std::vector<GpuControl> gpus, EnergyMonitor& monitor, PowerLimitOptimizerOptions options,
                              std::vector<Milliwatts> candidates, int world_size);

    // What create() checks and reads on this rank alone, before any collective.
    struct Prepared {
        std::vector<GpuControl> controls;
        PowerLimitConstraints constraints;
        std::optional<PowerLimitProfile> saved;
    };
    static Result<Prepared> prepare_locally(const Gpus& gpus, const EnergyMonitor& monitor,
                                            const PowerLimitOptimizerOptions& options);

    Status set_power_limit(Milliwatts limit);
    Status start_warmup(Milliwatts limit);
    Status begin_profiling(Milliwatts limit);
    Status finish_profiling(Milliwatts limit);
    // A window in which a GPU was lost (on any rank): no measurement.
    Status stop_for_lost_gpus(Milliwatts limit, const std::vector<unsigned>& lost,
                              const std::vector<std::string>& why);
    Status choose(bool save);
    // Done: selects again when the selector says its choice is stale.
    Status reselect_if_stale();

    std::vector<GpuControl> gpus_;
    EnergyMonitor& monitor_;
    PowerLimitOptimizerOptions options_;
    SelectorPtr selector_;
    std::vector<Milliwatts> candidates_;
    int world_size_;
    std::optional<std::size_t> report_steps_;  // steps per window of measurements_, when known
    std::vector<PowerLimitMeasurement> measurements_;
    std::vector<std::string> warnings_;
    PowerLimitState state_;
    std::optional<Milliwatts> current_limit_;  // what was last set on every GPU
    std::size_t steps_this_epoch_ = 0;
    int short_epochs_ = 0;  // consecutive epochs too short to profile one limit
    bool closed_ = false;
    std::optional<std::chrono::steady_clock::time_point> last_stale_check_;
    int reselections_ = 0;
};

}  // namespace zeus::optimizer
