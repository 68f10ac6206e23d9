#include <CLI/CLI.hpp>

#include <iostream>
#include <map>

#include "commands.hpp"
#include "option_checks.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/version.hpp"

int main(int argc, char** argv) {
    CLI::App app{"Zeus: measure and optimize the energy of GPU workloads", "zeus"};
    app.set_version_flag("--version", std::string("zeus ") + ZEUS_VERSION_STRING);
    // 0..1 so that CLI11 names an unknown subcommand instead of only saying one is required.
    app.require_subcommand(0, 1);
    std::map<const CLI::App*, zeus::cli::Command> commands;
    auto remember = [&](zeus::cli::Command cmd) { commands[app.get_subcommands({}).back()] = std::move(cmd); };
    remember(zeus::cli::add_show_env(app));
    remember(zeus::cli::add_demo(app));
    remember(zeus::cli::add_power(app));
    remember(zeus::cli::add_energy(app));
    remember(zeus::cli::add_run(app));
    remember(zeus::cli::add_profile(app));
    remember(zeus::cli::add_power_limit(app));
    remember(zeus::cli::add_exporter(app));
    remember(zeus::cli::add_bso_server(app));
    remember(zeus::cli::add_bso(app));
    remember(zeus::cli::add_perseus(app));
    remember(zeus::cli::add_perseus_server(app));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return zeus::cli::report_parse_error(app, e);
    }
    if (app.get_subcommands().empty()) {
        std::cerr << app.help() << "\nzeus: a subcommand is required (show-env, demo, power, energy, run, profile, power-limit, exporter, bso-server, perseus, perseus-server)\n";
        return 2;
    }
    try {
        for (const auto* sub : app.get_subcommands()) return commands.at(sub)();
    } catch (const zeus::ZeusError& e) {
        std::cerr << "zeus: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
