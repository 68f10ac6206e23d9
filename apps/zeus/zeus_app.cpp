#include "zeus_app.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "zeus/version.hpp"

namespace zeus::cli {

std::map<const CLI::App*, Command> add_commands(CLI::App& app) {
    app.set_version_flag("--version", std::string("zeus ") + ZEUS_VERSION_STRING);
    // 0..1 so that CLI11 names an unknown subcommand instead of only saying one is required.
    app.require_subcommand(0, 1);
    std::map<const CLI::App*, Command> commands;
    for (auto* add : {add_show_env, add_demo, add_power, add_energy, add_run, add_profile, add_power_limit, add_exporter,
                      add_bso_server, add_bso, add_perseus, add_perseus_server}) {
        Command command = add(app);
        commands[app.get_subcommands({}).back()] = std::move(command);
    }
    return commands;
}

std::string subcommand_list(const CLI::App& app) {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace zeus::cli
