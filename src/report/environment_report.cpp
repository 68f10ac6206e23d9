#include "zeus/report/environment_report.hpp"

#include "report/environment_json.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::report {

EnvironmentReport describe_environment(Gpus& gpus, const GpuOptions& options, const Cpus& cpus, const Soc& soc,
                                       bool probe_control) {
    nlohmann::ordered_json report = describe_environment(gpus, options, probe_control);
    report["zeusd"] = describe_zeusd(options.zeusd);
    report["cpus"] = describe_cpus(cpus);
    report["soc"] = describe_soc(soc);
    // Environment variables and paths appear in both: replaced in the JSON, escaped for the terminal.
    return {json_text(report, 2), terminal_safe_lines(render_human(report)), anything_measurable(report)};
}

}  // namespace zeus::report
