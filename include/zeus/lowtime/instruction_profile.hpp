// Perseus's offline instruction profile: time and energy of each pipeline
// stage's forward and backward at each SM frequency, as the original's CSV
// (`stage,instruction,frequency,time,energy`, or the richer
// `rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy`).
#pragma once

#include <cstddef>
#include <istream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "zeus/lowtime/pipeline.hpp"

namespace zeus::lowtime {

struct InstructionMeasurement {
    long long frequency = 0;  // MHz
    double time = 0.0;        // s, one microbatch
    double energy = 0.0;      // J
    std::size_t line = 0;     // the CSV line it came from (the first, when rows are combined)
};

struct InstructionProfile {
    std::size_t stages = 0;
    // (stage, kind) -> one measurement per frequency, in file order
    std::map<std::pair<std::size_t, InstructionKind>, std::vector<InstructionMeasurement>> measurements;
    [[nodiscard]] const std::vector<InstructionMeasurement>& of(std::size_t stage, InstructionKind kind) const {
        return measurements.at({stage, kind});
    }
};

struct ProfileReadOptions {
    // Off: every (stage, instruction) must have the same frequencies. The
    // original's profiler may stop scanning a stage early; allow that here.
    bool allow_differing_frequencies = false;
};

// Rows of the rich format that share (stage, instruction, frequency) are one
// measurement: tensor-parallel ranks of a pipeline combine as max time and
// summed energy, data-parallel replicas are averaged. Throws
// std::invalid_argument naming the line and the fix for a missing column, a bad
// number, an unknown instruction, a duplicate row, a missing stage, a
// (stage, instruction) without rows, or (by default) a missing frequency.
[[nodiscard]] InstructionProfile read_instruction_profile(std::istream& csv, const std::string& source_name,
                                                          const ProfileReadOptions& options = {});

}  // namespace zeus::lowtime
