// Simulator configuration: the JSON file named by ZEUS_SIM_CONFIG, or the
// documented default (two A100-SXM4-40GB). Parsing resolves presets and
// overrides into plain GpuParams and rejects unknown keys and bad values with
// a message that names the file and the key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config_error.h"
#include "gpu_params.h"

namespace zeus::sim {

enum class ClockMode { kReal, kVirtual };

struct SimConfig {
  std::string source;  // file path, or "<default>"
  std::uint64_t seed = 42;
  std::string driver_version = "570.133.20";
  std::string nvml_version = "12.570.133.20";
  int cuda_driver_version = 12080;
  ClockMode clock = ClockMode::kReal;
  bool driver_loaded = true;
  std::vector<GpuParams> gpus;
  std::uint64_t hash = 0;  // identifies the configuration in the shared state
};

inline constexpr const char* kConfigEnv = "ZEUS_SIM_CONFIG";
inline constexpr const char* kStateEnv = "ZEUS_SIM_STATE";

// Throws ConfigError.
SimConfig parse_config(const std::string& json_text, const std::string& source);
SimConfig load_config_from_environment();
const std::string& default_config_json();

}  // namespace zeus::sim
