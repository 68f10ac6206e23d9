#include "simulator.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>

#include "faults.h"
#include "sim_clock.h"
#include "trace_profile.h"

namespace zeus::sim {
namespace {

std::string format_number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

LoadSlot* find_load(SharedState& s, int id) {
  for (LoadSlot& load : s.loads) {
    if (load.in_use && load.id == id) return &load;
  }
  return nullptr;
}

}  // namespace

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  // A killed child that its parent has not reaped yet is a zombie: it exists
  // but runs nothing, so its load must stop.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

Simulator::Simulator(SimConfig config, const std::string& state_path)
    : config_(std::move(config)), mapping_(config_, state_path) {}

void Simulator::throw_no_such_gpu(unsigned gpu) const {
  throw SimError(Status::kNotFound, "GPU " + std::to_string(gpu) + " does not exist (the simulator has " +
                                        std::to_string(gpu_count()) + " GPUs, indices 0.." +
                                        std::to_string(gpu_count() - 1) + ")");
}

double Simulator::clock_now_locked(SharedState& s) const {
  if (s.header.virtual_clock) return s.header.virtual_now_s;
  // The monotonic clock never goes back; a wall-clock step does not move it.
  return static_cast<double>(std::max<std::int64_t>(0, monotonic_now_ns() - s.header.created_monotonic_ns)) * 1e-9;
}

double Simulator::prepare_locked(SharedState& s, unsigned gpu) {
  const double now = clock_now_locked(s);
  reap_dead_loads_locked(s, now);
  if (gpu == kAllGpus) {
    for (unsigned i = 0; i < gpu_count(); ++i) advance_gpu(s, i, now);
  } else {
    advance_gpu(s, gpu, now);
  }
  return now;
}

void Simulator::reap_dead_loads_locked(SharedState& s, double now) {
  const pid_t self = getpid();
  for (LoadSlot& load : s.loads) {
    if (!load.in_use || load.owner_pid == self || process_alive(load.owner_pid)) continue;
    // We cannot know when it died; it is charged until now, then dropped.
    if (load.gpu < gpu_count()) advance_gpu(s, load.gpu, now);
    load = LoadSlot{};
  }
}

double Simulator::now() {
  return with_gpu(kAllGpus, [](SharedState&, double t) { return t; });
}

void Simulator::advance_virtual(double seconds) {
  if (!virtual_clock()) {
    throw SimError(Status::kUnsupported,
                   "the simulator runs on the real clock; set \"clock\": \"virtual\" in the config to advance time");
  }
  if (!(seconds >= 0 && seconds <= kMaxAdvanceS)) {
    throw SimError(Status::kInvalidArgument, "advance needs a number of seconds in [0, 1e7] (one call may advance "
                                             "at most 1e7 s, about 116 days), got " + format_number(seconds));
  }
  SharedState& s = mapping_.state();
  StateLock lock(s);
  if (s.header.virtual_now_s + seconds > kMaxVirtualTimeS) {
    throw SimError(Status::kInvalidArgument,
                   "the virtual clock is limited to 1e9 s (about 32 years) in total; it is at " +
                       format_number(s.header.virtual_now_s) + " s, so advancing " + format_number(seconds) +
                       " s is refused (delete the ZEUS_SIM_STATE file to start over)");
  }
  s.header.virtual_now_s += seconds;
  prepare_locked(s, kAllGpus);
}

std::int64_t Simulator::unix_us_at(double t) {
  const StateHeader& h = mapping_.state().header;
  // The virtual clock's wall time is its own; the real clock's is the
  // monotonic time dated by the wall clock's current offset (a stepped wall
  // clock dates readings after the step, as a driver stamping them would).
  if (h.virtual_clock) return h.created_unix_us + static_cast<std::int64_t>(std::llround(t * 1e6));
  return (h.created_monotonic_ns + static_cast<std::int64_t>(std::llround(t * 1e9))) / 1000 + wall_offset_us();
}

void Simulator::check_profile_locked(const SharedState& s, int profile) const {
  if (profile < 0) return;
  if (profile >= static_cast<int>(kMaxProfiles) || !s.profiles[profile].in_use) {
    throw SimError(Status::kNotFound, "trace profile " + std::to_string(profile) +
                                          " does not exist; load one with zeusSimTraceProfileLoad first");
  }
}

int Simulator::add_load_locked(SharedState& s, unsigned gpu, double utilization, int profile, double target,
                               double now) {
  check_profile_locked(s, profile);
  for (LoadSlot& load : s.loads) {
    if (load.in_use) continue;
    load = LoadSlot{};
    load.in_use = true;
    load.id = s.header.next_load_id++;
    if (s.header.next_load_id <= 0) s.header.next_load_id = 1;
    load.owner_pid = getpid();
    load.process_pid = load.owner_pid;
    load.power_weight = 1.0;
    load.gpu = gpu;
    load.profile = profile;
    load.utilization = profile >= 0 ? 1.0 : utilization;
    load.work_target = target;
    load.started_s = now;
    // The GPU's operating point changes now.
    advance_gpu(s, gpu, now);
    return load.id;
  }
  throw SimError(Status::kState, "all 64 load slots are in use; end some loads (zeusSimLoadEnd)");
}

int Simulator::begin_load(unsigned gpu, double utilization, int profile) {
  if (profile < 0 && !(utilization > 0 && utilization <= 1)) {
    throw SimError(Status::kInvalidArgument, "utilization must be in (0, 1]");
  }
  return with_gpu(gpu, [&](SharedState& s, double now) { return add_load_locked(s, gpu, utilization, profile, 0, now); });
}

void Simulator::end_load(int load_id) {
  SharedState& s = mapping_.state();
  StateLock lock(s);
  const double now = clock_now_locked(s);
  reap_dead_loads_locked(s, now);
  LoadSlot* load = find_load(s, load_id);
  if (!load) throw SimError(Status::kNotFound, "load " + std::to_string(load_id) + " does not exist (already ended?)");
  advance_gpu(s, load->gpu, now);
  const unsigned gpu = load->gpu;
  *load = LoadSlot{};
  advance_gpu(s, gpu, now);  // refresh the reported operating point
}

double Simulator::run_work(unsigned gpu, double units, double utilization, int profile) {
  if (!std::isfinite(units) || units <= 0) throw SimError(Status::kInvalidArgument, "work must be a number > 0");
  if (profile < 0 && !(utilization > 0 && utilization <= 1)) {
    throw SimError(Status::kInvalidArgument, "utilization must be in (0, 1]");
  }
  const int id = with_gpu(gpu, [&](SharedState& s, double now) {
    return add_load_locked(s, gpu, utilization, profile, units, now);
  });

  if (virtual_clock()) {
    SharedState& s = mapping_.state();
    StateLock lock(s);
    LoadSlot* load = find_load(s, id);
    // Work may take the clock up to its limit, no further.
    advance_gpu(s, gpu, kMaxVirtualTimeS, load);
    if (!load->completed) {
      *load = LoadSlot{};
      throw SimError(Status::kState,
                     "work did not complete before the virtual clock's limit of 1e9 s (too much work for its rate)");
    }
    s.header.virtual_now_s = std::max(s.header.virtual_now_s, load->completed_s);
    const double elapsed = load->completed_s - load->started_s;
    *load = LoadSlot{};
    advance_gpu(s, gpu, s.header.virtual_now_s);
    return elapsed;
  }

  for (;;) {
    double wait_s = 0;
    {
      SharedState& s = mapping_.state();
      StateLock lock(s);
      prepare_locked(s, gpu);
      LoadSlot* load = find_load(s, id);
      if (!load) throw SimError(Status::kState, "the running work was removed from the simulator state");
      if (load->completed) {
        const double elapsed = load->completed_s - load->started_s;
        *load = LoadSlot{};
        return elapsed;
      }
      const OperatingPoint op = operating_point(s, gpu);
      const double rate = load_work_rate(s.gpus[gpu].params, op, *load);
      wait_s = rate > 0 ? (load->work_target - load->work_done) / rate : 0.05;
    }
    // Sleep close to the expected completion, re-checking often enough to
    // follow changes of the power limit or clocks made meanwhile.
    std::this_thread::sleep_for(std::chrono::duration<double>(std::clamp(wait_s, 0.001, 0.05)));
  }
}

int Simulator::load_trace_profile(const std::string& csv_path, const std::string& workload, int batch_size,
                                  const std::string& optimizer) {
  TraceRows rows = read_trace_csv(csv_path, workload, batch_size, optimizer);
  SharedState& s = mapping_.state();
  StateLock lock(s);
  return store_trace_profile(s, std::move(rows));
}

int Simulator::define_trace_profile(const std::string& name, unsigned points, const double* limits,
                                    const double* epoch_s, const double* power_w) {
  if (!limits || !epoch_s || !power_w) throw SimError(Status::kInvalidArgument, "trace profile arrays must not be NULL");
  if (points < 2 || points > kMaxProfilePoints) {
    throw SimError(Status::kInvalidArgument, "a trace profile needs 2 to 64 points");
  }
  TraceRows rows;
  rows.key = "defined:" + name;
  rows.power_limit_w.assign(limits, limits + points);
  rows.time_per_epoch_s.assign(epoch_s, epoch_s + points);
  rows.average_power_w.assign(power_w, power_w + points);
  SharedState& s = mapping_.state();
  StateLock lock(s);
  return store_trace_profile(s, std::move(rows));
}

void Simulator::inject(unsigned gpu, std::string_view fault, double value) {
  with_gpu(gpu, [&](SharedState& s, double now) {
    inject_fault(s.gpus[gpu], fault, value, now);
    advance_gpu(s, gpu, now);
    return 0;
  });
}

}  // namespace zeus::sim
