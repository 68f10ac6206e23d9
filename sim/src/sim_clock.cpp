#include "sim_clock.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <limits>
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

std::int64_t wall_offset_us() {
  constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kCleanReadUs = 100;  // the wall clock read between two monotonic reads this close
  constexpr std::int64_t kStepUs = 1000;      // a change this large is a step of the wall clock
  static std::atomic<std::int64_t> kept{kUnknown};
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::int64_t before = monotonic_now_ns() / 1000;
    const std::int64_t wall = unix_now_us();
    const std::int64_t after = monotonic_now_ns() / 1000;
    if (after - before > kCleanReadUs) continue;  // preempted between the reads
    const std::int64_t seen = wall - before - (after - before) / 2;
    const std::int64_t known = kept.load(std::memory_order_relaxed);
    if (known != kUnknown && std::llabs(seen - known) <= kStepUs) return known;
    kept.store(seen, std::memory_order_relaxed);
    return seen;
  }
  const std::int64_t known = kept.load(std::memory_order_relaxed);
  return known != kUnknown ? known : unix_now_us() - monotonic_now_ns() / 1000;
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
