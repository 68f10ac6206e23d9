// Finding the power rails of a Jetson's INA3221 power monitors in sysfs, and
// reading a rail's power. Two layouts exist (zeus-inventory §4.6):
//   - hwmon (L4T 34 and later): <dev>/hwmon/hwmonN/in<i>_label, with
//     power<i>_input (µW, the hwmon ABI) or in<i>_input (mV) x curr<i>_input (mA);
//   - IIO (L4T 32, driver ina3221x): <dev>/iio:deviceN/rail_name_<i>, with
//     in_power<i>_input (mW) or in_voltage<i>_input (mV) x in_current<i>_input (mA).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/soc.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus::soc {

// Where the INA3221 drivers list their devices, relative to /sys.
inline constexpr std::string_view kIna3221DriverDirs[] = {"bus/i2c/drivers/ina3221x", "bus/i2c/drivers/ina3221"};

struct RailSource {
    std::string name;                 // the driver's label, e.g. "VDD_IN"
    std::optional<SocMetric> metric;
    std::filesystem::path dir;        // the folder holding the label and value files
    // Either a power file, or a voltage and a current file whose product is power.
    std::optional<std::filesystem::path> power;
    std::optional<std::filesystem::path> voltage;
    std::optional<std::filesystem::path> current;
    double watts_per_unit = 1e-3;     // of the power file's value, or of voltage x current
    std::string power_unit;           // for describe(): "mW", "µW"
    std::optional<Error> problem;     // why this rail cannot be read at all (no value files, unreadable label)

    // The files power comes from, with units, for status output.
    [[nodiscard]] std::string describe() const;
};

// Which metric a rail counts towards, by name (case-insensitive): cpu -> cpu,
// gpu -> gpu, system/_in/total -> total, checked in that order.
[[nodiscard]] std::optional<SocMetric> classify_rail(std::string_view name);

// Every rail under `sysfs_root` (standing for /sys), sorted by folder and
// channel. Unconnected channels (labelled "NC") are left out. `searched`
// receives the driver folders looked in, for messages.
[[nodiscard]] std::vector<RailSource> discover_rails(const std::filesystem::path& sysfs_root,
                                                     std::vector<std::string>* searched = nullptr);

// The rail's power now, or the error naming the file and the fix.
[[nodiscard]] Result<Watts> read_power(const RailSource& rail);

}  // namespace zeus::soc
