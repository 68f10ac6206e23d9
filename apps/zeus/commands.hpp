// The `zeus` subcommands. Each registers its options on a CLI11 app and
// returns the process exit code when run.
#pragma once


#include <functional>

// CLI11 is heavy to parse (seconds per file): only files that register
// options include it.
namespace CLI {
class App;
}  // namespace CLI

namespace zeus::cli {

using Command = std::function<int()>;

// Options every GPU-using command shares.
struct DeviceFlags {
    bool simulate = false;
};
void add_device_flags(CLI::App& app, DeviceFlags& flags);

Command add_show_env(CLI::App& parent);
Command add_demo(CLI::App& parent);
Command add_power(CLI::App& parent);
Command add_energy(CLI::App& parent);
Command add_run(CLI::App& parent);
Command add_profile(CLI::App& parent);
Command add_power_limit(CLI::App& parent);
Command add_exporter(CLI::App& parent);
Command add_bso_server(CLI::App& parent);
Command add_bso(CLI::App& parent);
Command add_perseus(CLI::App& parent);
Command add_perseus_server(CLI::App& parent);

}  // namespace zeus::cli
