#include <CLI/CLI.hpp>

#include <iostream>

#include "option_checks.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/standard_descriptors.hpp"
#include "zeus_app.hpp"

namespace {

// Descriptors 0-2 are occupied before any shared library initialises, not
// first thing in main(): the executable's .preinit_array runs before every
// library's constructors, any of which may open a descriptor as it loads (gRPC
// did, before its client moved to a module loaded on demand) and so take a
// closed descriptor 0 before main() could occupy it.
void occupy_before_libraries(int /*argc*/, char** /*argv*/, char** /*envp*/) {
    zeus::occupy_closed_standard_descriptors();
}

[[gnu::used, gnu::section(".preinit_array")]] void (*const kOccupyBeforeLibraries)(int, char**,
                                                                                   char**) = occupy_before_libraries;

}  // namespace

int main(int argc, char** argv) {
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
