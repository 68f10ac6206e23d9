#include "sim_clock.h"

#include <fstream>
#include <string>

namespace zeus::sim {
namespace {

ClockSource g_source = nullptr;

timespec read(clockid_t clock) {
  timespec ts{};
  (g_source != nullptr ? g_source : ::clock_gettime)(clock, &ts);
  return ts;
}

}  // namespace

std::int64_t monotonic_now_ns() {
  const timespec ts = read(CLOCK_MONOTONIC);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t unix_now_us() {
  const timespec ts = read(CLOCK_REALTIME);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

const char* boot_id() {
  static const std::string id = [] {
    std::string line;
    std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), line);
    return line;
  }();
  return id.c_str();
}

void set_clock_source_for_testing(ClockSource source) { g_source = source; }

}  // namespace zeus::sim
