// The sections of the environment report (include/zeus/report/environment_report.hpp)
// as JSON, and its human rendering: the human output is rendered from the
// JSON, so both formats always say the same thing. Internal to libzeus.
#pragma once

#include <nlohmann/json.hpp>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"

namespace zeus::report {

// Describes `gpus`. Whether the power limit may be changed is inferred from
// the process's capabilities, unless `probe_control` asks to find out for sure
// by re-applying each GPU's current limit (a privileged write of an unchanged
// value, so it is never done by default).
[[nodiscard]] nlohmann::ordered_json describe_environment(Gpus& gpus, const GpuOptions& options, bool probe_control);

// The CPU (RAPL) and SoC (Jetson) sections of the same report.
[[nodiscard]] nlohmann::ordered_json describe_cpus(const Cpus& cpus);
[[nodiscard]] nlohmann::ordered_json describe_soc(const Soc& soc);

// The zeusd section: null when no daemon is configured; else its endpoint,
// whether it answered (or why not), its version, groups and devices,
// whether it requires auth, this user's name, scopes and token expiry, and
// what this process may do through it, each with the reason when not.
[[nodiscard]] nlohmann::ordered_json describe_zeusd(const std::optional<ZeusdConfig>& config);

// True when at least one GPU can be measured (energy counter or power).
[[nodiscard]] bool anything_measurable(const nlohmann::ordered_json& report);

[[nodiscard]] std::string render_human(const nlohmann::ordered_json& report);

}  // namespace zeus::report
