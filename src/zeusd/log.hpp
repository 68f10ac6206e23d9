// The daemon's log: one line per event on stdout (as the original's tracing
// output), filtered by level. The level comes from RUST_LOG, the variable
// the original's operators already set (error, warn, info, debug, trace).
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace zeus::zeusd::log {

enum class Level { Error = 0, Warn, Info, Debug, Trace };

void set_level(Level level);
[[nodiscard]] bool enabled(Level level);
// Parses RUST_LOG's simple form; unknown text keeps the default (info) and says so.
void configure_from_environment();
void write(Level level, std::string_view message);

template <class... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::Error)) write(Level::Error, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::Warn)) write(Level::Warn, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::Info)) write(Level::Info, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::Debug)) write(Level::Debug, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace zeus::zeusd::log
