#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "option_checks.hpp"
#include "zeus/report/environment_report.hpp"

namespace zeus::cli {

void add_device_flags(CLI::App& app, DeviceFlags& flags) {
    app.add_flag("--simulate", flags.simulate,
                 "Use the Zeus GPU simulator instead of real GPUs (same as ZEUS_SIMULATE=1)");
}

Command add_show_env(CLI::App& parent) {
    auto* cmd = parent.add_subcommand("show-env", "Show the GPUs, libraries and capabilities Zeus finds");
    struct Options {
        DeviceFlags device;
        std::string format = "human";
        bool check_control = false;
    };
    auto opts = std::make_shared<Options>();
    add_device_flags(*cmd, opts->device);
    cmd->add_option("--format", opts->format, "Output format")->check(one_of({"human", "json"}));
    cmd->add_flag("--check-control", opts->check_control,
                  "Find out whether the power limit may be changed by re-applying each GPU's current limit");
    return [opts]() {
        auto options = GpuOptions::from_environment();
        if (!options) {
            std::cerr << "zeus: " << options.error().describe() << "\n";
            return 2;
        }
        GpuOptions gpu_options = options.value();
        gpu_options.simulate = gpu_options.simulate || opts->device.simulate;
        Gpus gpus = Gpus::open(gpu_options);
        auto cpu_options = CpuOptions::from_environment();
        if (!cpu_options) {
            std::cerr << "zeus: " << cpu_options.error().describe() << "\n";
            return 2;
        }
        auto soc_options = SocOptions::from_environment();
        if (!soc_options) {
            std::cerr << "zeus: " << soc_options.error().describe() << "\n";
            return 2;
        }
        auto soc = open_soc(*soc_options);
        if (!soc) {
            std::cerr << "zeus: " << soc.error().describe() << "\n";
            return 2;
        }
        const report::EnvironmentReport found =
            report::describe_environment(gpus, gpu_options, Cpus::open(*cpu_options), **soc, opts->check_control);
        if (opts->format == "json") {
            std::cout << found.json << "\n";
        } else {
            std::cout << found.human;
        }
        return found.anything_measurable ? 0 : 1;
    };
}

}  // namespace zeus::cli
