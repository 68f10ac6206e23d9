#include "zeus/optimizer/power_limit_optimizer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <utility>

#include "zeus/optimizer/power_limit_profile.hpp"

namespace zeus::optimizer {
namespace {

Error invalid(std::string message, std::string hint) {
    return Error{ErrorCode::InvalidArgument, std::move(message), std::move(hint), 0};
}

Status check_options(const PowerLimitOptimizerOptions& options) {
    if (options.profile_steps == 0) {
        return invalid("profile_steps is 0", "measure each power limit over at least one step (the default is 40)");
    }
    if (!(options.pl_step.count() >= 0.001) || !std::isfinite(options.pl_step.count())) {
        return invalid(fmt::format("pl_step {} W is not a positive power", options.pl_step.count()),
                       "give the distance between candidate limits in watts, e.g. 25");
    }
    if (!(options.reselect_period.count() >= 0)) {
        return invalid(fmt::format("reselect_period {} s is not at least 0", options.reselect_period.count()),
                       "give how often to ask the selector whether its choice went stale, e.g. 60 s");
    }
    for (const Watts limit : options.power_limits) {
        if (!std::isfinite(limit.count()) || limit.count() <= 0.0) {
            return invalid(fmt::format("power_limits holds {} W, not a positive power", limit.count()),
                           "give candidate limits in watts, e.g. {300, 250, 225}");
        }
    }
    return {};
}

std::string watts_text(Milliwatts limit) { return fmt::format("{:g} W", quantity_cast<Watts>(limit).count()); }

// The given limits, highest first, each once; every one must be settable.
Result<std::vector<Milliwatts>> listed_limits(PowerLimitConstraints constraints, const std::vector<Watts>& listed) {
    std::vector<Milliwatts> limits;
    for (const Watts w : listed) {
        const Milliwatts mw(static_cast<std::int64_t>(std::llround(w.count() * 1000.0)));
        if (mw < constraints.min || mw > constraints.max) {
            return invalid(fmt::format("power_limits holds {}, outside the GPUs' range {} to {}", watts_text(mw),
                                       watts_text(constraints.min), watts_text(constraints.max)),
                           "list only limits the GPUs accept");
        }
        limits.push_back(mw);
    }
    std::sort(limits.begin(), limits.end(), [](Milliwatts a, Milliwatts b) { return a > b; });
    limits.erase(std::unique(limits.begin(), limits.end()), limits.end());
    return limits;
}

// Candidates from the maximum down; the minimum only when the step lands on it.
std::vector<Milliwatts> candidate_limits(PowerLimitConstraints constraints, Watts step) {
    const auto step_mw = static_cast<std::int64_t>(std::llround(step.count() * 1000.0));
    std::vector<Milliwatts> limits;
    for (std::int64_t mw = constraints.max.count(); mw >= constraints.min.count(); mw -= step_mw) {
        limits.emplace_back(mw);
    }
    return limits;
}

// The directory must take a new file now, not after an hour of profiling.
Status check_writable(const std::filesystem::path& path) {
    std::error_code ec;
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::filesystem::create_directories(dir, ec);
    const auto probe = dir / fmt::format(".{}.probe-{}", path.filename().string(), ::getpid());
    {
        std::ofstream out(probe);
        if (!out) {
            return Error{ErrorCode::NoPermission,
                         fmt::format("the power-limit profile {} cannot be written (directory {} does not take new "
                                     "files)",
                                     path.string(), dir.string()),
                         "choose a profile_path in a writable directory, or leave it unset to skip saving", 0};
        }
    }
    std::filesystem::remove(probe, ec);
    return {};
}

struct GpuSelection {
    std::vector<Gpu*> gpus;
    PowerLimitConstraints constraints;
};

Result<GpuSelection> monitored_gpus(const Gpus& gpus, const EnergyMonitor& monitor) {
    const auto& indices = monitor.gpu_indices();
    if (indices.empty()) {
        return Error{ErrorCode::NotFound, "the energy monitor watches no GPU, so there is no power limit to optimize",
                     "open the monitor with the GPUs to optimize (EnergyMonitorOptions::gpu_indices)", 0};
    }
    GpuSelection selection;
    for (unsigned index : indices) {
        auto gpu = gpus.at(index);
        if (!gpu) return gpu.error();
        auto constraints = (*gpu)->power_limit_constraints();
        if (!constraints) return constraints.error();
        if (!selection.gpus.empty() && (constraints->min != selection.constraints.min ||
                                        constraints->max != selection.constraints.max)) {
            return invalid(
                fmt::format("GPU {} allows power limits {}–{}, GPU {} allows {}–{}: one limit cannot suit both",
                            indices.front(), watts_text(selection.constraints.min),
                            watts_text(selection.constraints.max), index, watts_text(constraints->min),
                            watts_text(constraints->max)),
                "monitor GPUs of one model (one optimizer per model), or one GPU per process with a communicator");
        }
        selection.constraints = *constraints;
        selection.gpus.push_back(*gpu);
    }
    return selection;
}

// Every rank must profile the same candidates, or their collectives drift apart.
Status check_ranks_agree(profile::Communicator& communicator, PowerLimitConstraints c) {
    const auto max_mw = static_cast<double>(c.max.count());
    const auto min_mw = static_cast<double>(c.min.count());
    auto reduced = communicator.all_reduce({max_mw, min_mw, -max_mw, -min_mw}, profile::ReduceOp::Max);
    if (!reduced) return reduced.error();
    const auto& r = *reduced;
    if (r[0] != -r[2] || r[1] != -r[3]) {
        return Error{ErrorCode::InvalidState, "the ranks' GPUs allow different power limits",
                     "run one optimizer per GPU model; every rank must profile the same candidate limits", 0};
    }
    return {};
}

}  // namespace

Result<std::unique_ptr<GlobalPowerLimitOptimizer>> GlobalPowerLimitOptimizer::create(
    const Gpus& gpus, EnergyMonitor& monitor, PowerLimitOptimizerOptions options) {
    auto local = prepare_locally(gpus, monitor, options);
    if (options.communicator != nullptr) {
        // Every rank learns whether all of them got this far, so that one
        // rank's bad option fails them all instead of leaving the others
        // waiting in a collective forever.
        auto failed = options.communicator->all_reduce({local ? 0.0 : 1.0}, profile::ReduceOp::Max);
        if (!failed) return failed.error();
        if (!local) return local.error();
        if (failed->front() != 0.0) {
            return Error{ErrorCode::InvalidState, "another rank could not set up its power-limit optimizer",
                         "see that rank's error; every rank must be able to change its GPUs' limits", 0};
        }
    }
    if (!local) return local.error();
    int world_size = static_cast<int>(local->controls.size());
    if (options.communicator != nullptr) {
        if (auto s = check_ranks_agree(*options.communicator, local->constraints); !s) return s.error();
        auto total = options.communicator->all_reduce({static_cast<double>(world_size)}, profile::ReduceOp::Sum);
        if (!total) return total.error();
        world_size = static_cast<int>(std::lround(total->front()));
    }
    std::vector<Milliwatts> candidates;
    if (options.power_limits.empty()) {
        candidates = candidate_limits(local->constraints, options.pl_step);
    } else {
        auto listed = listed_limits(local->constraints, options.power_limits);
        if (!listed) return listed.error();
        candidates = std::move(listed).value();
    }
    if (!options.selector) {
        auto selector = zeus_cost(0.5);
        if (!selector) return selector.error();
        options.selector = std::move(selector).value();
    }
    std::unique_ptr<GlobalPowerLimitOptimizer> optimizer(new GlobalPowerLimitOptimizer(
        std::move(local->controls), monitor, std::move(options), std::move(candidates), world_size));
    if (local->saved) {
        optimizer->measurements_ = std::move(local->saved->measurements);
        optimizer->report_steps_ = local->saved->profile_steps;
        if (auto s = optimizer->choose(/*save=*/false); !s) return s.error();
    } else if (auto s = optimizer->set_power_limit(optimizer->candidates_.front()); !s) {
        return s.error();
    }
    return optimizer;
}

Result<GlobalPowerLimitOptimizer::Prepared> GlobalPowerLimitOptimizer::prepare_locally(
    const Gpus& gpus, const EnergyMonitor& monitor, const PowerLimitOptimizerOptions& options) {
    if (auto s = check_options(options); !s) return s.error();
    auto selection = monitored_gpus(gpus, monitor);
    if (!selection) return selection.error();
    Prepared prepared;
    prepared.constraints = selection->constraints;
    for (Gpu* gpu : selection->gpus) {
        if (auto s = gpu->check_power_limit_control(); !s) return s.error();
        auto before = gpu->power_limit();
        if (!before) return before.error();
        prepared.controls.push_back({gpu, *before});
    }
    if (!options.profile_path) return prepared;
    std::error_code ec;
    if (!std::filesystem::exists(*options.profile_path, ec)) {
        if (auto s = check_writable(*options.profile_path); !s) return s.error();
        return prepared;
    }
    auto profile = load_power_limit_profile(*options.profile_path);
    if (!profile) return profile.error();
    for (const auto& m : profile->measurements) {
        if (m.power_limit < prepared.constraints.min || m.power_limit > prepared.constraints.max) {
            return Error{ErrorCode::InvalidConfig,
                         fmt::format("power-limit profile {} holds {}, outside what these GPUs allow ({}–{}): it was "
                                     "measured on other GPUs",
                                     options.profile_path->string(), watts_text(m.power_limit),
                                     watts_text(prepared.constraints.min), watts_text(prepared.constraints.max)),
                         "give a profile measured on this GPU model, or delete the file to profile again", 0};
        }
    }
    prepared.saved = std::move(profile).value();
    return prepared;
}

GlobalPowerLimitOptimizer::GlobalPowerLimitOptimizer(std::vector<GpuControl> gpus, EnergyMonitor& monitor,
                                                     PowerLimitOptimizerOptions options,
                                                     std::vector<Milliwatts> candidates, int world_size)
    : gpus_(std::move(gpus)),
      monitor_(monitor),
      options_(std::move(options)),
      selector_(options_.selector),
      candidates_(std::move(candidates)),
      world_size_(world_size),
      report_steps_(options_.profile_steps),
      state_(state::Ready{candidates_.front(), options_.wait_steps + 1}) {}

GlobalPowerLimitOptimizer::~GlobalPowerLimitOptimizer() {
    if (auto s = close(); !s) {
        std::fprintf(stderr, "zeus: power-limit optimizer: %s\n", s.error().describe().c_str());
    }
}

std::optional<Milliwatts> GlobalPowerLimitOptimizer::optimal_power_limit() const {
    if (const auto* done = std::get_if<state::Done>(&state_)) return done->optimal;
    return std::nullopt;
}

Status GlobalPowerLimitOptimizer::set_power_limit(Milliwatts limit) {
    if (current_limit_ == limit) return {};
    current_limit_.reset();  // unknown until every GPU took it
    for (const auto& control : gpus_) {
        if (auto s = control.gpu->set_power_limit(limit); !s) {
            Error e = s.error();
            e.message = fmt::format("setting GPU {} to {}: {}", control.gpu->identity().index, watts_text(limit),
                                    e.message);
            return e;
        }
    }
    current_limit_ = limit;
    return {};
}

Status GlobalPowerLimitOptimizer::start_warmup(Milliwatts limit) {
    if (auto s = set_power_limit(limit); !s) return s;
    if (options_.warmup_steps == 0) return begin_profiling(limit);
    state_ = state::Warmup{limit, options_.warmup_steps};
    return {};
}

Status GlobalPowerLimitOptimizer::begin_profiling(Milliwatts limit) {
    if (auto s = monitor_.begin_window(power_limit_window_name(limit)); !s) return s;
    state_ = state::Profiling{limit, options_.profile_steps};
    return {};
}

Status GlobalPowerLimitOptimizer::finish_profiling(Milliwatts limit) {
    auto m = monitor_.end_window(power_limit_window_name(limit));
    if (!m) return m.error();
    double energy = 0;
    std::vector<unsigned> lost;   // this rank's GPUs that stopped answering
    std::vector<std::string> why; // and what the monitor said of each
    for (const auto& [index, value] : m->gpu_energy) {
        if (value.lost) {
            lost.push_back(index);
            why.push_back(value.warnings.empty() ? fmt::format("GPU {} stopped answering", index)
                                                 : value.warnings.front());
        }
        energy += value.energy.count();
    }
    double time = m->time.count();
    double lost_gpus = static_cast<double>(lost.size());
    if (options_.communicator != nullptr) {
        // One collective for both, so that every rank learns of a loss on any.
        auto total = options_.communicator->all_reduce({energy, lost_gpus}, profile::ReduceOp::Sum);
        if (!total) return total.error();
        auto slowest = options_.communicator->all_reduce({time}, profile::ReduceOp::Max);
        if (!slowest) return slowest.error();
        energy = total->at(0);
        lost_gpus = total->at(1);
        time = slowest->front();
    }
    if (lost_gpus > 0.0) return stop_for_lost_gpus(limit, lost, why);
    measurements_.push_back({limit, Joules(energy), Seconds(time)});
    for (const auto& [index, value] : m->gpu_energy) {
        for (const auto& warning : value.warnings) {
            warnings_.push_back(fmt::format("{} on GPU {}: {}", watts_text(limit), index, warning));
        }
    }
    const auto it = std::find(candidates_.begin(), candidates_.end(), limit);
    if (it == candidates_.end() || it + 1 == candidates_.end()) return choose(/*save=*/true);
    return start_warmup(*(it + 1));
}

Status GlobalPowerLimitOptimizer::stop_for_lost_gpus(Milliwatts limit, const std::vector<unsigned>& lost,
                                                     const std::vector<std::string>& why) {
    // The window's total lacks the lost GPUs' energy: kept, it would make
    // this limit look cheaper than it is. Profiling again would not help
    // (a lost GPU stays lost until it is reset, and the next limit cannot
    // be set on it), so profiling stops here.
    const std::string who = lost.empty()       ? std::string("a GPU of another rank was")
                            : lost.size() == 1 ? fmt::format("GPU {} was", lost.front())
                                               : fmt::format("GPUs {} were", fmt::join(lost, ", "));
    const std::string cause = why.empty() ? std::string("see that rank's warning") : fmt::format("{}", fmt::join(why, "; "));
    warnings_.push_back(fmt::format("{}: window discarded, {} lost in it, its energy is incomplete: {}", watts_text(limit),
                                    who, cause));
    std::fprintf(stderr, "zeus: power-limit optimizer: warning: %s\n", warnings_.back().c_str());
    // Training goes on at full power on every GPU that still answers; the
    // profile is incomplete and is not saved.
    const Milliwatts maximum = candidates_.front();
    state_ = state::Done{maximum};
    current_limit_.reset();
    for (const auto& control : gpus_) (void)control.gpu->set_power_limit(maximum);
    return Error{ErrorCode::GpuLost,
                 fmt::format("{} lost while {} was profiled, so that limit cannot be measured ({}); profiling "
                             "stopped, the window is discarded and training continues at the maximum limit {} on "
                             "the GPUs that still answer",
                             who, watts_text(limit), cause, watts_text(maximum)),
                 "check the GPU (nvidia-smi; Xid errors in the kernel log) and reset it, then profile again with a "
                 "new optimizer",
                 0};
}

Status GlobalPowerLimitOptimizer::choose(bool save) {
    auto optimal = selector_->select(measurements_, SelectionContext{world_size_});
    if (!optimal) {
        // Training goes on at full power rather than at a half-profiled limit.
        state_ = state::Done{candidates_.front()};
        if (auto s = set_power_limit(candidates_.front()); !s) return s;
        return optimal.error();
    }
    state_ = state::Done{*optimal};
    if (auto s = set_power_limit(*optimal); !s) return s;
    if (save && options_.profile_path) {
        return save_power_limit_profile(*options_.profile_path, PowerLimitProfile{measurements_, options_.profile_steps});
    }
    return {};
}

Status GlobalPowerLimitOptimizer::reselect_if_stale() {
    if (!done() || measurements_.empty()) return {};
    const auto now = std::chrono::steady_clock::now();
    if (last_stale_check_ && now - *last_stale_check_ < options_.reselect_period) return {};
    last_stale_check_ = now;
    if (!selector_->stale()) return {};
    auto optimal = selector_->select(measurements_, SelectionContext{world_size_});
    if (!optimal) {
        // Training goes on at the limit chosen before rather than stopping.
        warnings_.push_back("re-selecting the power limit failed, keeping the current one: " +
                            optimal.error().describe());
        std::fprintf(stderr, "zeus: power-limit optimizer: warning: %s\n", warnings_.back().c_str());
        return {};
    }
    ++reselections_;
    state_ = state::Done{*optimal};
    return set_power_limit(*optimal);
}

Status GlobalPowerLimitOptimizer::on_step_begin() {
    if (closed_) return {};
    ++steps_this_epoch_;
    if (done()) return reselect_if_stale();
    if (auto* ready = std::get_if<state::Ready>(&state_)) {
        if (--ready->steps == 0) return start_warmup(ready->next);
    } else if (auto* warmup = std::get_if<state::Warmup>(&state_)) {
        if (--warmup->steps == 0) return begin_profiling(warmup->limit);
    } else if (auto* profiling = std::get_if<state::Profiling>(&state_)) {
        if (--profiling->steps == 0) return finish_profiling(profiling->limit);
    }
    return {};
}

Status GlobalPowerLimitOptimizer::on_epoch_end() {
    if (closed_) return {};
    const std::size_t epoch_steps = std::exchange(steps_this_epoch_, 0);
    std::optional<Milliwatts> interrupted;
    if (const auto* warmup = std::get_if<state::Warmup>(&state_)) interrupted = warmup->limit;
    if (const auto* profiling = std::get_if<state::Profiling>(&state_)) {
        interrupted = profiling->limit;
        auto cancelled = monitor_.end_window(power_limit_window_name(profiling->limit), /*sync=*/false, /*cancel=*/true);
        if (!cancelled) return cancelled.error();
    }
    if (!interrupted) {
        short_epochs_ = 0;
        return reselect_if_stale();
    }
    // A retried limit needs one step to be set, its warm-up and its window
    // inside one epoch. The original retries forever when epochs are
    // shorter; two such epochs in a row end profiling instead.
    const std::size_t needed = 1 + options_.warmup_steps + options_.profile_steps;
    short_epochs_ = epoch_steps < needed ? short_epochs_ + 1 : 0;
    if (short_epochs_ >= 2) {
        state_ = state::Done{candidates_.front()};
        if (auto s = set_power_limit(candidates_.front()); !s) return s;
        return Error{ErrorCode::InvalidState,
                     fmt::format("epochs of {} steps cannot hold one power limit's warm-up and window ({} steps: 1 to "
                                 "set it, {} warm-up, {} profiled); profiling stopped, training continues at the "
                                 "maximum limit",
                                 epoch_steps, needed, options_.warmup_steps, options_.profile_steps),
                     fmt::format("lower warmup_steps and profile_steps so that they add up to at most {}", epoch_steps - 1),
                     0};
    }
    state_ = state::Ready{*interrupted, 1};
    return set_power_limit(candidates_.front());
}

Status GlobalPowerLimitOptimizer::close() {
    if (closed_) return {};
    closed_ = true;
    Status result;
    if (const auto* profiling = std::get_if<state::Profiling>(&state_)) {
        auto cancelled = monitor_.end_window(power_limit_window_name(profiling->limit), false, true);
        if (!cancelled) result = cancelled.error();
    }
    for (const auto& control : gpus_) {
        if (auto s = control.gpu->set_power_limit(control.before); !s && result) {
            Error e = s.error();
            e.message = fmt::format("restoring GPU {} to its earlier limit {}: {}", control.gpu->identity().index,
                                    watts_text(control.before), e.message);
            result = e;
        }
    }
    current_limit_.reset();
    return result;
}

Result<PowerLimitReport> GlobalPowerLimitOptimizer::report(const std::vector<SelectorPtr>& others) const {
    std::vector<SelectorPtr> selectors{selector_};
    for (const auto& other : others) {
        const bool listed = std::any_of(selectors.begin(), selectors.end(),
                                        [&](const SelectorPtr& s) { return s->name() == other->name(); });
        if (!listed) selectors.push_back(other);
    }
    auto report = make_power_limit_report(measurements_, selectors, SelectionContext{world_size_}, report_steps_);
    if (report) report.value().warnings = warnings_;
    return report;
}

}  // namespace zeus::optimizer
