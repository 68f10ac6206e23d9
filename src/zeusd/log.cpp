#include "zeusd/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace zeus::zeusd::log {
namespace {

std::atomic<int> current_level{static_cast<int>(Level::Info)};
std::mutex output_mutex;

std::string_view name(Level level) {
    switch (level) {
        case Level::Error: return "ERROR";
        case Level::Warn: return " WARN";
        case Level::Info: return " INFO";
        case Level::Debug: return "DEBUG";
        case Level::Trace: return "TRACE";
    }
    return "";
}

}  // namespace

void set_level(Level level) { current_level.store(static_cast<int>(level), std::memory_order_relaxed); }

bool enabled(Level level) { return static_cast<int>(level) <= current_level.load(std::memory_order_relaxed); }

void configure_from_environment() {
    const char* value = std::getenv("RUST_LOG");
    if (value == nullptr || *value == '\0') return;
    const std::string text(value);
    if (text == "error") set_level(Level::Error);
    else if (text == "warn") set_level(Level::Warn);
    else if (text == "info") set_level(Level::Info);
    else if (text == "debug") set_level(Level::Debug);
    else if (text == "trace") set_level(Level::Trace);
    else if (text == "off") set_level(static_cast<Level>(-1));
    else warn("RUST_LOG={} is not one of off, error, warn, info, debug, trace; logging at info", text);
}

void write(Level level, std::string_view message) {
    const auto now = std::chrono::system_clock::now();
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
    const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    const std::lock_guard lock(output_mutex);
    fmt::print(stdout, "{}.{:06}Z {} zeusd: {}\n", stamp, micros % 1000000, name(level), message);
    std::fflush(stdout);
}

}  // namespace zeus::zeusd::log
