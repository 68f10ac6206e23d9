#include "config.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_parse.h"
#include "platform/csv_line.hpp"
#include "zeus/platform/user_file.hpp"
#include "nvml_errors.h"
#include "presets.h"
#include "shared_state.h"

namespace zeus::sim {
namespace {

using nlohmann::json;

// Reads one JSON object, remembering which keys were consumed so that a typo
// ("idel_w") is reported instead of silently ignored.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string path, const std::string& source)
      : object_(object), path_(std::move(path)), source_(source) {
    if (!object_.is_object()) fail(path_.empty() ? "the top level" : path_, "must be a JSON object");
  }

  [[noreturn]] void fail(const std::string& key_path, const std::string& problem) const {
    throw ConfigError("zeus-sim config " + source_ + ": " + key_path + " " + problem);
  }

  std::string key_path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  const json* find(const char* key) {
    known_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  void number(const char* key, double& out, double min, double max = std::numeric_limits<double>::max()) {
    const json* v = find(key);
    if (!v) return;
    if (!v->is_number()) fail(key_path(key), "must be a number, got " + v->dump());
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < min || x > max) {
      std::ostringstream range;
      range << "must be in [" << min << ", " << max << "], got " << v->dump();
      fail(key_path(key), range.str());
    }
    out = x;
  }

  // Milliseconds in the file, seconds in GpuParams.
  void milliseconds(const char* key, double& out_s, double min_ms, double max_ms) {
    double ms = out_s * 1000.0;
    number(key, ms, min_ms, max_ms);
    out_s = ms / 1000.0;
  }

  template <typename Int>
  void integer(const char* key, Int& out, long double min, long double max) {
    const json* v = find(key);
    if (!v) return;
    if (!v->is_number_integer()) fail(key_path(key), "must be an integer, got " + v->dump());
    const long double x = v->is_number_unsigned() ? static_cast<long double>(v->get<std::uint64_t>())
                                                  : static_cast<long double>(v->get<std::int64_t>());
    if (x < min || x > max) fail(key_path(key), "is out of range: " + v->dump());
    out = static_cast<Int>(x);
  }

  void boolean(const char* key, bool& out) {
    const json* v = find(key);
    if (!v) return;
    if (!v->is_boolean()) fail(key_path(key), "must be true or false, got " + v->dump());
    out = v->get<bool>();
  }

  bool string(const char* key, std::string& out) {
    const json* v = find(key);
    if (!v) return false;
    if (!v->is_string()) fail(key_path(key), "must be a string, got " + v->dump());
    out = v->get<std::string>();
    return true;
  }

  // Runs `read` on a nested object if present.
  template <typename F>
  void object(const char* key, F&& read) {
    const json* v = find(key);
    if (!v) return;
    ObjectReader nested(*v, key_path(key), source_);
    read(nested);
    nested.finish();
  }

  void finish() const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (known_.count(it.key())) continue;
      std::string known;
      for (const std::string& k : known_) known += (known.empty() ? "" : ", ") + k;
      fail(key_path(it.key().c_str()), "is not a known key (known keys here: " + known + ")");
    }
  }

 private:
  const json& object_;
  std::string path_;
  const std::string& source_;
  std::set<std::string> known_;
};

void copy_string(char* dst, std::size_t size, const std::string& src) {
  std::strncpy(dst, src.c_str(), size - 1);
  dst[size - 1] = '\0';
}

void read_power(ObjectReader& r, GpuParams& p) {
  r.number("idle_w", p.idle_w, 0, 5000);
  r.number("max_dynamic_w", p.max_dynamic_w, 0, 5000);
  r.number("leakage_w_per_c", p.leakage_w_per_c, 0, 100);
  r.number("leakage_reference_c", p.leakage_reference_c, -50, 150);
  r.number("clock_exponent", p.clock_exponent, 0.5, 5);
  r.number("limit_min_w", p.limit_min_w, 1, 5000);
  r.number("limit_max_w", p.limit_max_w, 1, 5000);
  r.number("limit_default_w", p.limit_default_w, 1, 5000);
  r.number("module_extra_w", p.module_extra_w, 0, 5000);
  r.number("memory_fraction", p.memory_power_fraction, 0, 1);
}

void read_thermal(ObjectReader& r, GpuParams& p) {
  r.number("ambient_c", p.ambient_c, -50, 100);
  r.number("resistance_c_per_w", p.thermal_resistance_c_per_w, 0, 10);
  r.number("time_constant_s", p.thermal_time_constant_s, 0.001, 1e9);
  r.number("initial_c", p.initial_temperature_c, -50, 200);
  r.number("throttle_c", p.throttle_temperature_c, -50, 500);
  r.number("throttle_mhz_per_c", p.throttle_mhz_per_c, 0, 10000);
}

void read_clocks(ObjectReader& r, GpuParams& p) {
  r.number("graphics_max_mhz", p.graphics_max_mhz, 1, 10000);
  r.number("graphics_min_mhz", p.graphics_min_mhz, 1, 10000);
  double step = 15.0;
  r.number("graphics_step_mhz", step, 1, 10000);
  double memory = p.memory_clock_mhz;
  r.number("memory_mhz", memory, 1, 100000);
  p.memory_clock_mhz = static_cast<std::uint32_t>(std::lround(memory));
  p.memory_clocks_mhz[0] = p.memory_clock_mhz;
  p.memory_clock_count = 1;
  if (p.graphics_min_mhz >= p.graphics_max_mhz) {
    r.fail(r.key_path("graphics_min_mhz"), "must be below graphics_max_mhz");
  }
  fill_graphics_clocks(p, step);
  if (const json* list = r.find("supported_graphics_mhz")) {
    if (!list->is_array() || list->empty() || list->size() > kMaxGraphicsClocks) {
      r.fail(r.key_path("supported_graphics_mhz"), "must be a non-empty list of at most 256 clocks in MHz");
    }
    std::vector<std::uint32_t> clocks;
    for (const json& c : *list) {
      if (!c.is_number_unsigned() || c.get<std::uint64_t>() == 0 || c.get<std::uint64_t>() > 10000) {
        r.fail(r.key_path("supported_graphics_mhz"), "entries must be integers in (0, 10000], got " + c.dump());
      }
      clocks.push_back(c.get<std::uint32_t>());
    }
    std::sort(clocks.rbegin(), clocks.rend());
    p.graphics_clock_count = static_cast<std::uint32_t>(clocks.size());
    std::copy(clocks.begin(), clocks.end(), p.graphics_clocks_mhz);
    p.graphics_max_mhz = clocks.front();
    p.graphics_min_mhz = clocks.back();
  }
}

void read_counters(ObjectReader& r, GpuParams& p) {
  r.milliseconds("energy_period_ms", p.energy_period_s, 1, 10000);
  r.milliseconds("power_period_ms", p.power_period_s, 10, 1000);
  r.milliseconds("power_window_ms", p.power_window_s, 1, 1000);
  r.number("power_noise_w", p.power_noise_w, 0, 1000);
  std::string usage;
  if (r.string("power_usage", usage)) {
    if (usage == "instant") {
      p.power_usage_source = PowerUsageSource::kInstant;
    } else if (usage == "average") {
      p.power_usage_source = PowerUsageSource::kAverage1s;
    } else {
      r.fail(r.key_path("power_usage"), "must be \"instant\" or \"average\", got \"" + usage + "\"");
    }
  }
  r.boolean("energy_supported", p.energy_counter_supported);
  r.boolean("power_average_supported", p.power_average_field_supported);
  r.object("scopes", [&](ObjectReader& s) {
    s.boolean("gpu", p.gpu_scope_supported);
    s.boolean("module", p.module_scope_supported);
    s.boolean("memory", p.memory_scope_supported);
  });
  if (p.power_window_s > p.power_period_s + 1e-12) {
    r.fail(r.key_path("power_window_ms"), "must not exceed power_period_ms");
  }
}

void read_faults(ObjectReader& r, GpuParams& p) {
  r.boolean("energy_not_supported", p.fault_energy_not_supported);
  std::string error_name;
  if (r.string("init_error", error_name)) {
    const auto code = nvml_error_from_name(error_name);
    if (!code || *code == 0) {
      r.fail(r.key_path("init_error"),
             "must name an NVML error such as \"GPU_IS_LOST\" or \"NVML_ERROR_UNKNOWN\", got \"" + error_name + "\"");
    }
    p.fault_init_error = *code;
  }
  r.number("counter_reset_at_s", p.fault_counter_reset_at_s, 0);
  r.number("stuck_counter_after_s", p.fault_stuck_counter_after_s, 0);
  r.object("power_spikes", [&](ObjectReader& s) {
    s.number("every_s", p.fault_spike_every_s, 0.001);
    s.number("extra_w", p.fault_spike_extra_w, -5000, 5000);
  });
}

// "default" first, so that a named call overrides it whatever the key order.
void read_driver_latency(ObjectReader& r, GpuParams& p) {
  constexpr double kMaxUs = 1e6;
  double all = -1.0;
  r.number("default", all, 0, kMaxUs);
  if (all >= 0) p.driver_latency.set_all(all);
  for (std::size_t i = 0; i < kDriverCallCount; ++i) {
    const auto call = static_cast<DriverCall>(i);
    double us = p.driver_latency.of(call);
    r.number(driver_call_key(call), us, 0, kMaxUs);
    p.driver_latency.set(call, us);
  }
}

void validate_power(const ObjectReader& r, const GpuParams& p) {
  if (!(p.limit_min_w <= p.limit_default_w && p.limit_default_w <= p.limit_max_w)) {
    r.fail(r.key_path("power"), "limits must satisfy limit_min_w <= limit_default_w <= limit_max_w");
  }
}

// Temperature where heating by the idle power balances cooling, so a fresh GPU
// does not start with a thermal transient.
double idle_equilibrium_c(const GpuParams& p) {
  const double r = p.thermal_resistance_c_per_w;
  const double k = p.leakage_w_per_c;
  const double t = (p.ambient_c + r * (p.idle_w - k * p.leakage_reference_c)) / (1.0 - r * k);
  if (r * k < 1.0 && t >= p.leakage_reference_c) return t;
  return p.ambient_c + r * p.idle_w;
}

void read_gpu(const json& entry, const std::string& path, const std::string& source, std::uint64_t seed,
              std::vector<GpuParams>& gpus) {
  ObjectReader r(entry, path, source);
  std::string model;
  if (!r.string("model", model)) r.fail(path, "needs a \"model\" (one of the presets)");
  auto preset = find_preset(model);
  if (!preset) {
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    r.fail(r.key_path("model"), "\"" + model + "\" is not a known model (known: " + names + ")");
  }
  unsigned count = 1;
  r.integer("count", count, 1, kMaxGpus);

  GpuParams p = *preset;
  std::string name;
  if (r.string("name", name)) {
    // It must fit NVML's 96-byte name buffer; cutting it silently would show
    // a name nobody configured.
    if (name.size() >= sizeof p.name) {
      r.fail(r.key_path("name"), "must be at most " + std::to_string(sizeof p.name - 1) + " characters long, got " +
                                     std::to_string(name.size()));
    }
    copy_string(p.name, sizeof p.name, name);
  }
  double memory_mib = static_cast<double>(p.memory_total_bytes) / (1024.0 * 1024.0);
  r.number("memory_mib", memory_mib, 1, 1e9);
  p.memory_total_bytes = static_cast<std::uint64_t>(memory_mib) * 1024ULL * 1024ULL;
  r.object("thermal", [&](ObjectReader& s) { read_thermal(s, p); });
  // Leakage is counted from the ambient unless power.leakage_reference_c says otherwise.
  p.leakage_reference_c = p.ambient_c;
  r.object("power", [&](ObjectReader& s) {
    read_power(s, p);
    validate_power(s, p);
  });
  r.object("clocks", [&](ObjectReader& s) { read_clocks(s, p); });
  r.object("counters", [&](ObjectReader& s) { read_counters(s, p); });
  r.object("permissions", [&](ObjectReader& s) {
    s.boolean("set_power_limit", p.can_set_power_limit);
    s.boolean("set_clocks", p.can_set_clocks);
    s.boolean("set_persistence", p.can_set_persistence);
  });
  r.object("faults", [&](ObjectReader& s) { read_faults(s, p); });
  r.object("driver_latency_us", [&](ObjectReader& s) { read_driver_latency(s, p); });
  bool has_initial_energy = false;
  std::uint64_t initial_energy = 0;
  if (r.find("initial_energy_mj")) {
    r.integer("initial_energy_mj", initial_energy, 0, 1e18L);
    has_initial_energy = true;
  }
  r.finish();

  if (std::isnan(p.initial_temperature_c)) p.initial_temperature_c = idle_equilibrium_c(p);
  for (unsigned i = 0; i < count; ++i) {
    if (gpus.size() >= kMaxGpus) {
      r.fail(path, "exceeds the simulator's limit of " + std::to_string(kMaxGpus) + " GPUs in total");
    }
    GpuParams gpu = p;
    assign_identity(gpu, seed, static_cast<unsigned>(gpus.size()));
    if (has_initial_energy) gpu.initial_energy_mj = initial_energy;
    gpus.push_back(gpu);
  }
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

const std::string& default_config_json() {
  static const std::string text = R"({
  "seed": 42,
  "driver_version": "570.133.20",
  "nvml_version": "12.570.133.20",
  "cuda_driver_version": 12080,
  "clock": "real",
  "driver_loaded": true,
  "gpus": [
    {"model": "A100-SXM4-40GB", "count": 2}
  ]
}
)";
  return text;
}

SimConfig parse_config(const std::string& json_text, const std::string& source) {
  const json root = parse_config_json(json_text, source);
  SimConfig config;
  config.source = source;
  ObjectReader r(root, "", source);
  r.integer("seed", config.seed, 0, 1.8e19L);
  r.string("driver_version", config.driver_version);
  r.string("nvml_version", config.nvml_version);
  r.integer("cuda_driver_version", config.cuda_driver_version, 1000, 1e6L);
  std::string clock;
  if (r.string("clock", clock)) {
    if (clock == "real") {
      config.clock = ClockMode::kReal;
    } else if (clock == "virtual") {
      config.clock = ClockMode::kVirtual;
    } else {
      r.fail("clock", "must be \"real\" or \"virtual\", got \"" + clock + "\"");
    }
  }
  r.boolean("driver_loaded", config.driver_loaded);
  if (config.driver_version.size() >= 80 || config.nvml_version.size() >= 80) {
    r.fail("driver_version", "and nvml_version must be shorter than 80 characters");
  }
  const json* gpus = r.find("gpus");
  r.finish();
  if (!gpus) {
    config.gpus = parse_config(default_config_json(), "<default>").gpus;
    for (unsigned i = 0; i < config.gpus.size(); ++i) assign_identity(config.gpus[i], config.seed, i);
  } else {
    if (!gpus->is_array()) r.fail("gpus", "must be a list of GPU objects");
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      read_gpu((*gpus)[i], "gpus[" + std::to_string(i) + "]", source, config.seed, config.gpus);
    }
  }
  // Canonical dump (sorted keys) so that formatting changes keep the same state.
  config.hash = fnv1a(root.dump() + "#layout" + std::to_string(kStateLayoutVersion));
  return config;
}

SimConfig load_config_from_environment() {
  // An empty value counts as unset, like an unset variable in a shell script.
  const char* path = std::getenv(kConfigEnv);
  if (!path || !*path) return parse_config(default_config_json(), "<default>");
  auto file = zeus::read_user_file_text(path);
  if (!file.ok()) {
    throw ConfigError(std::string("zeus-sim config ") + path + ": " + file.detail + "; fix " + kConfigEnv +
                      " or unset it to use the default two A100 GPUs");
  }
  zeus::drop_utf8_bom(file.text);  // saved by a Windows editor
  return parse_config(file.text, path);
}

}  // namespace zeus::sim
