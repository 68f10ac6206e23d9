// The zeusSim* control API: thin wrappers that translate to the Simulator and
// turn exceptions into status codes plus a thread-local message.
#include <cstring>
#include <string>

#include "capi_support.h"
#include "config.h"
#include "counters.h"
#include "last_error.h"
#include "presets.h"
#include "session.h"
#include "zeus_sim/zeus_sim.h"

using namespace zeus::sim;
using namespace zeus::sim::capi;

namespace {

// Reads one value of a GPU after bringing it up to now.
template <typename F>
zeusSimStatus_t read_gpu(unsigned gpu, double* out, const char* what, F&& value) {
  return api_call([&] {
    require(out, what);
    auto sim = open_simulator();
    *out = sim->with_gpu(gpu, [&](SharedState& s, double) { return value(s.gpus[gpu]); });
  });
}

}  // namespace

extern "C" {

const char* zeusSimLastError(void) { return last_error(); }

zeusSimStatus_t zeusSimOpen(void) {
  return api_call([] { session_open(Opener::kApi); });
}

zeusSimStatus_t zeusSimClose(void) {
  return api_call([] {
    if (!session_close(Opener::kApi)) throw SimError(Status::kState, "zeusSimClose without a matching zeusSimOpen");
  });
}

zeusSimStatus_t zeusSimGpuCount(unsigned* count) {
  return api_call([&] {
    require(count, "count");
    *count = open_simulator()->gpu_count();
  });
}

zeusSimStatus_t zeusSimNow(double* seconds) {
  return api_call([&] {
    require(seconds, "seconds");
    *seconds = open_simulator()->now();
  });
}

zeusSimStatus_t zeusSimUnixTimeUs(long long* unix_us) {
  return api_call([&] {
    require(unix_us, "unix_us");
    const auto sim = open_simulator();
    *unix_us = sim->unix_us_at(sim->now());
  });
}

zeusSimStatus_t zeusSimAdvance(double seconds) {
  return api_call([&] { open_simulator()->advance_virtual(seconds); });
}

zeusSimStatus_t zeusSimIsVirtualClock(int* is_virtual) {
  return api_call([&] {
    require(is_virtual, "is_virtual");
    *is_virtual = open_simulator()->virtual_clock() ? 1 : 0;
  });
}

zeusSimStatus_t zeusSimGroundTruthEnergy(unsigned gpu, double* joules) {
  return read_gpu(gpu, joules, "joules", [](const GpuState& g) { return g.dyn.energy_j; });
}

zeusSimStatus_t zeusSimPowerSensorEnergy(unsigned gpu, double* joules, long long* refreshed_unix_us,
                                         double* reading_w) {
  return api_call([&] {
    require(joules, "joules");
    require(refreshed_unix_us, "refreshed_unix_us");
    require(reading_w, "reading_w");
    auto sim = open_simulator();
    double refreshed_s = 0;
    sim->with_gpu(gpu, [&](SharedState& s, double) {
      const GpuDynamics& d = s.gpus[gpu].dyn;
      *joules = d.sensor_energy_j;
      *reading_w = d.instant_power_w;
      refreshed_s = d.power_refreshed_s;
      return 0;
    });
    *refreshed_unix_us = sim->unix_us_at(refreshed_s);
  });
}

zeusSimStatus_t zeusSimTruePower(unsigned gpu, double* watts) {
  return read_gpu(gpu, watts, "watts", [](const GpuState& g) { return g.dyn.power_w; });
}

zeusSimStatus_t zeusSimTemperature(unsigned gpu, double* celsius) {
  return read_gpu(gpu, celsius, "celsius", [](const GpuState& g) { return g.dyn.temperature_c; });
}

zeusSimStatus_t zeusSimClockMhz(unsigned gpu, double* mhz) {
  return read_gpu(gpu, mhz, "mhz", [](const GpuState& g) { return g.dyn.clock_mhz; });
}

zeusSimStatus_t zeusSimLoadBegin(unsigned gpu, double utilization, int* load_id) {
  return api_call([&] {
    require(load_id, "load_id");
    *load_id = open_simulator()->begin_load(gpu, utilization, -1);
  });
}

zeusSimStatus_t zeusSimLoadEnd(int load_id) {
  return api_call([&] { open_simulator()->end_load(load_id); });
}

zeusSimStatus_t zeusSimRunWork(unsigned gpu, double work_units, double utilization, double* elapsed_s) {
  return api_call([&] {
    const double elapsed = open_simulator()->run_work(gpu, work_units, utilization, -1);
    if (elapsed_s) *elapsed_s = elapsed;
  });
}

zeusSimStatus_t zeusSimInjectFault(unsigned gpu, const char* fault, double value) {
  return api_call([&] {
    require(fault, "fault");
    open_simulator()->inject(gpu, fault, value);
  });
}

zeusSimStatus_t zeusSimTraceProfileLoad(const char* csv_path, const char* workload, int batch_size,
                                        const char* optimizer, int* profile_id) {
  return api_call([&] {
    require(csv_path, "csv_path");
    require(workload, "workload");
    require(profile_id, "profile_id");
    *profile_id = open_simulator()->load_trace_profile(csv_path, workload, batch_size, optimizer ? optimizer : "");
  });
}

zeusSimStatus_t zeusSimTraceProfileDefine(const char* name, unsigned points, const double* power_limit_w,
                                          const double* time_per_epoch_s, const double* average_power_w,
                                          int* profile_id) {
  return api_call([&] {
    require(name, "name");
    require(profile_id, "profile_id");
    *profile_id =
        open_simulator()->define_trace_profile(name, points, power_limit_w, time_per_epoch_s, average_power_w);
  });
}

zeusSimStatus_t zeusSimTraceLoadBegin(unsigned gpu, int profile_id, int* load_id) {
  return api_call([&] {
    require(load_id, "load_id");
    if (profile_id < 0) throw SimError(Status::kInvalidArgument, "profile_id must be >= 0");
    *load_id = open_simulator()->begin_load(gpu, 1.0, profile_id);
  });
}

zeusSimStatus_t zeusSimRunTraceWork(unsigned gpu, int profile_id, double epochs, double* elapsed_s) {
  return api_call([&] {
    if (profile_id < 0) throw SimError(Status::kInvalidArgument, "profile_id must be >= 0");
    const double elapsed = open_simulator()->run_work(gpu, epochs, 1.0, profile_id);
    if (elapsed_s) *elapsed_s = elapsed;
  });
}

zeusSimStatus_t zeusSimGetGpuStatus(unsigned gpu, zeusSimGpuStatus_t* status) {
  return api_call([&] {
    require(status, "status");
    if (status->size != sizeof(zeusSimGpuStatus_t)) {
      throw SimError(Status::kInvalidArgument, "status->size must be set to sizeof(zeusSimGpuStatus_t)");
    }
    open_simulator()->with_gpu(gpu, [&](SharedState& s, double now) {
      const GpuState& g = s.gpus[gpu];
      std::strncpy(status->name, g.params.name, sizeof status->name - 1);
      status->name[sizeof status->name - 1] = '\0';
      std::strncpy(status->uuid, g.params.uuid, sizeof status->uuid - 1);
      status->uuid[sizeof status->uuid - 1] = '\0';
      status->now_s = now;
      status->true_power_w = g.dyn.power_w;
      status->temperature_c = g.dyn.temperature_c;
      status->clock_mhz = g.dyn.clock_mhz;
      status->power_limit_w = g.dyn.power_limit_w;
      status->utilization = g.dyn.utilization;
      status->ground_truth_energy_j = g.dyn.energy_j;
      status->energy_counter_supported = g.params.energy_counter_supported && !g.dyn.energy_disabled;
      status->energy_counter_mj = g.dyn.energy_counter_mj;
      status->instant_power_reading_w = g.dyn.instant_power_w;
      status->average_power_reading_w = g.dyn.average_power_w;
      status->active_loads = 0;
      for (const LoadSlot& load : s.loads) {
        if (load.in_use && !load.completed && load.gpu == gpu) ++status->active_loads;
      }
      status->lost = g.dyn.lost ? 1 : 0;
      return 0;
    });
  });
}

unsigned zeusSimPresetCount(void) { return static_cast<unsigned>(preset_count()); }

zeusSimStatus_t zeusSimPresetInfo(unsigned index, zeusSimPresetInfo_t* info) {
  return api_call([&] {
    require(info, "info");
    if (info->size != sizeof(zeusSimPresetInfo_t)) {
      throw SimError(Status::kInvalidArgument, "info->size must be set to sizeof(zeusSimPresetInfo_t)");
    }
    const auto preset = preset_summary(index);
    if (!preset) {
      throw SimError(Status::kNotFound,
                     "no preset " + std::to_string(index) + " (there are " + std::to_string(preset_count()) + ")");
    }
    const auto copy = [](char* dst, std::size_t size, const char* src) {
      std::strncpy(dst, src, size - 1);
      dst[size - 1] = '\0';
    };
    copy(info->key, sizeof info->key, preset->key);
    copy(info->name, sizeof info->name, preset->name);
    copy(info->trace_names, sizeof info->trace_names, preset->trace_names);
    info->limit_min_w = preset->limit_min_w;
    info->limit_max_w = preset->limit_max_w;
    info->limit_default_w = preset->limit_default_w;
    info->energy_counter_supported = preset->energy_counter ? 1 : 0;
  });
}

const char* zeusSimDefaultConfigJson(void) { return default_config_json().c_str(); }

}  // extern "C"
