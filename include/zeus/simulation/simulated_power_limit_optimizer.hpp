// The power-limit optimizer on a private simulated GPU following a measured
// power trace (`zeus bso simulate`): every traced limit profiled in the first
// epoch, in equal shares, then the ZeusCost choice at the job's eta.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "zeus/bso/trace_replay.hpp"
#include "zeus/optimizer/optimum_selector.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/simulation/simulator_api.hpp"

namespace zeus::simulation {

class SimulatedPowerLimitOptimizer {
  public:
    // The simulator preset is the one the trace `csv` was measured on.
    [[nodiscard]] static Result<SimulatedPowerLimitOptimizer> open(const std::string& csv, double eta);

    // The limit (W) the optimizer chooses for `job` at `batch_size`, over
    // the traced `limits`.
    [[nodiscard]] Result<double> choose(const bso::TraceJob& job, std::int64_t batch_size,
                                        const bso::LimitTable& limits) const;

    [[nodiscard]] const std::string& gpu() const { return preset_.key; }

  private:
    static constexpr std::size_t kWarmupSteps = 10;
    static constexpr std::size_t kProfileSteps = 40;

    SimulatedPowerLimitOptimizer(std::string csv, SimulatorPreset preset, std::vector<SimulatorPreset> presets,
                                 optimizer::SelectorPtr selector)
        : csv_(std::move(csv)),
          preset_(std::move(preset)),
          presets_(std::move(presets)),
          selector_(std::move(selector)) {}

    std::string csv_;
    SimulatorPreset preset_;
    std::vector<SimulatorPreset> presets_;
    optimizer::SelectorPtr selector_;
};

}  // namespace zeus::simulation
