// Finding RAPL zones in a powercap tree. The kernel exposes each zone both
// flat (/sys/class/powercap/intel-rapl:0, intel-rapl:0:0...) and nested
// (/sys/class/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:0); containers
// mount either. Package zones are exactly intel-rapl:<N>; their sub-zones
// (core, uncore, dram) are intel-rapl:<N>:<M> inside them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zeus/device/cpu.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::rapl {

struct ZoneDir {
    unsigned index = 0;  // N of intel-rapl:N
    std::string path;
};

// The N of "intel-rapl:N" (no sub-zone part), else nullopt.
[[nodiscard]] std::optional<unsigned> package_zone_index(const std::string& entry_name);

// Top-level zones directly in `dir` whose name file exists, sorted by N
// (numerically: intel-rapl:10 after intel-rapl:2).
[[nodiscard]] std::vector<ZoneDir> package_zone_dirs(const std::string& dir);

// Where the zones are: options.powercap_root alone when set, else the first
// of options.powercap_search with a zone; each candidate is tried as is and
// with /intel-rapl appended. NotFound with the fix when there is none.
[[nodiscard]] Result<std::string> find_powercap_root(const CpuOptions& options);

// The package zone's sub-zone whose name is "dram", if any.
[[nodiscard]] std::optional<std::string> find_dram_zone(const std::string& package_dir);

}  // namespace zeus::rapl
