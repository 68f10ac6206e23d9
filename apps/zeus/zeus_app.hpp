// The whole `zeus` command line as one CLI11 app: main() parses it, and tests
// build the same app to enumerate every command's options.
#pragma once

#include <map>
#include <string>

#include "commands.hpp"

namespace zeus::cli {

// Registers every subcommand on `app` (named "zeus"); the map gives the
// runner of each top-level subcommand. The runners own the storage the
// options parse into: keep the map alive while `app` parses.
[[nodiscard]] std::map<const CLI::App*, Command> add_commands(CLI::App& app);

// "show-env, demo, ..., perseus-server": every top-level subcommand, in order.
[[nodiscard]] std::string subcommand_list(const CLI::App& app);

}  // namespace zeus::cli
