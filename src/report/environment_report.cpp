#include "zeus/report/environment_report.hpp"

#include "report/environment_json.hpp"

namespace zeus::report {

EnvironmentReport describe_environment(Gpus& gpus, const GpuOptions& options, const Cpus& cpus, const Soc& soc,
                                       bool probe_control) {
    nlohmann::ordered_json report = describe_environment(gpus, options, probe_control);
    report["zeusd"] = describe_zeusd(options.zeusd);
    report["cpus"] = describe_cpus(cpus);
    report["soc"] = describe_soc(soc);
    return {report.dump(2), render_human(report), anything_measurable(report)};
}

}  // namespace zeus::report
