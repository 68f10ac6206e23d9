#include <CLI/CLI.hpp>

#include <iostream>

#include "option_checks.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/standard_descriptors.hpp"
#include "zeus_app.hpp"

int main(int argc, char** argv) {
    zeus::occupy_closed_standard_descriptors();  // before any file is opened
    CLI::App app{"Zeus: measure and optimize the energy of GPU workloads", "zeus"};
    const auto commands = zeus::cli::add_commands(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return zeus::cli::report_parse_error(app, e);
    }
    if (app.get_subcommands().empty()) {
        std::cerr << app.help() << "\nzeus: a subcommand is required (" << zeus::cli::subcommand_list(app) << ")\n";
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
