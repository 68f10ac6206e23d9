// What this machine offers Zeus: every GPU with its capabilities (and why
// not), the CPU packages and DRAM zones, the SoC rails, and the zeusd daemon
// with what this process may do through it. One implementation for
// `zeus show-env` and `python -m zeus_native.show_env`.
//
//   auto report = zeus::report::describe_environment(gpus, options, cpus, *soc);
//   std::cout << report.human;   // or report.json
#pragma once

#include <string>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"

namespace zeus::report {

struct EnvironmentReport {
    std::string json;   // one JSON document (indented by 2, no trailing newline)
    std::string human;  // the same report for people, rendered from the JSON
    bool anything_measurable = false;  // at least one GPU can be measured (energy counter or power)
};

// `gpus` was opened with `options` (its zeusd section describes
// options.zeusd). Whether the power limit may be changed is inferred from the
// process's capabilities, unless `probe_control` asks to find out for sure by
// re-applying each GPU's current limit (a privileged write of an unchanged
// value, so never done by default).
[[nodiscard]] EnvironmentReport describe_environment(Gpus& gpus, const GpuOptions& options, const Cpus& cpus,
                                                     const Soc& soc, bool probe_control = false);

}  // namespace zeus::report
