#include "device/soc/ina3221_rails.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include "device/soc/sysfs_value.hpp"

namespace zeus::soc {
namespace fs = std::filesystem;
namespace {

enum class Layout { HwmonLabel, IioRailName };

bool dir_exists(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);  // follows symlinks: sysfs device entries are links
}

bool file_exists(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec) && !fs::is_directory(p, ec);
}

std::vector<fs::path> sorted_children(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}

// Links in a sysfs device folder that lead back up or sideways (cycles), and
// folders that never hold a power monitor's attributes.
bool skipped_child(const std::string& name) {
    static constexpr std::string_view kSkipped[] = {"driver", "subsystem", "of_node", "firmware_node", "power",
                                                    "module"};
    if (std::find(std::begin(kSkipped), std::end(kSkipped), name) != std::end(kSkipped)) return true;
    return name.starts_with("supplier:") || name.starts_with("consumer:");
}

// The folders that may hold rails: each device, its children (iio:deviceN,
// hwmon) and hwmon's children (hwmonN).
std::vector<fs::path> candidate_dirs(const fs::path& driver_dir) {
    std::vector<fs::path> out;
    for (const auto& device : sorted_children(driver_dir)) {
        if (!dir_exists(device) || skipped_child(device.filename().string())) continue;
        out.push_back(device);
        for (const auto& child : sorted_children(device)) {
            const std::string name = child.filename().string();
            if (!dir_exists(child) || skipped_child(name)) continue;
            out.push_back(child);
            if (name != "hwmon") continue;
            for (const auto& hwmon : sorted_children(child)) {
                if (dir_exists(hwmon) && hwmon.filename().string().starts_with("hwmon")) out.push_back(hwmon);
            }
        }
    }
    return out;
}

// "in12_label" -> "12" (hwmon), "rail_name_3" -> "3" (IIO); nullopt for other names.
std::optional<std::string> channel_of(const std::string& file, Layout layout) {
    std::string_view rest = file;
    if (layout == Layout::HwmonLabel) {
        if (!rest.starts_with("in") || !rest.ends_with("_label")) return std::nullopt;
        rest = rest.substr(2, rest.size() - 2 - 6);
    } else {
        if (!rest.starts_with("rail_name_")) return std::nullopt;
        rest = rest.substr(10);
    }
    if (rest.empty() || !std::all_of(rest.begin(), rest.end(), [](unsigned char c) { return std::isdigit(c); })) {
        return std::nullopt;
    }
    return std::string(rest);
}

int channel_number(const std::string& channel) {
    int n = 0;
    std::from_chars(channel.data(), channel.data() + channel.size(), n);
    return n;
}

RailSource make_rail(const fs::path& dir, const fs::path& label_file, const std::string& channel, Layout layout) {
    RailSource rail;
    rail.dir = dir;
    auto label = read_sysfs_text(label_file);
    if (!label) {
        rail.name = label_file.filename().string();
        rail.problem = label.error();
        return rail;
    }
    rail.name = *label;
    rail.metric = classify_rail(rail.name);

    const bool hwmon = layout == Layout::HwmonLabel;
    const fs::path power =
        dir / (hwmon ? fmt::format("power{}_input", channel) : fmt::format("in_power{}_input", channel));
    const fs::path voltage =
        dir / (hwmon ? fmt::format("in{}_input", channel) : fmt::format("in_voltage{}_input", channel));
    const fs::path current =
        dir / (hwmon ? fmt::format("curr{}_input", channel) : fmt::format("in_current{}_input", channel));
    if (file_exists(power)) {
        rail.power = power;
        // hwmon's ABI says µW (INA238 on Thor); NVIDIA's IIO driver writes mW.
        rail.watts_per_unit = hwmon ? 1e-6 : 1e-3;
        rail.power_unit = hwmon ? "µW" : "mW";
    } else if (file_exists(voltage) && file_exists(current)) {
        rail.voltage = voltage;
        rail.current = current;
        rail.watts_per_unit = 1e-6;  // mV x mA
    } else {
        rail.problem = Error{
            ErrorCode::NotSupported,
            fmt::format("rail {} ({}): neither {} nor both {} and {} exist", rail.name, label_file.string(),
                        power.filename().string(), voltage.filename().string(), current.filename().string()),
            fmt::format("this kernel's INA3221 driver exposes other files; report `ls {}` with the board model "
                        "and L4T version (/etc/nv_tegra_release)",
                        dir.string()),
            0};
    }
    return rail;
}

void discover_in(const fs::path& dir, std::vector<RailSource>& out) {
    for (Layout layout : {Layout::HwmonLabel, Layout::IioRailName}) {
        std::vector<std::pair<int, RailSource>> found;
        for (const auto& file : sorted_children(dir)) {
            auto channel = channel_of(file.filename().string(), layout);
            if (!channel || !file_exists(file)) continue;
            RailSource rail = make_rail(dir, file, *channel, layout);
            if (rail.name == "NC") continue;  // an unconnected channel (second INA3221 on AGX Orin)
            found.emplace_back(channel_number(*channel), std::move(rail));
        }
        std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& [n, rail] : found) out.push_back(std::move(rail));
    }
}

}  // namespace

std::string RailSource::describe() const {
    if (power) return fmt::format("{} ({})", power->string(), power_unit);
    if (voltage && current) return fmt::format("{} (mV) x {} (mA)", voltage->string(), current->string());
    return fmt::format("{} (no value files)", dir.string());
}

std::optional<SocMetric> classify_rail(std::string_view name) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("cpu") != std::string::npos) return SocMetric::Cpu;
    if (lower.find("gpu") != std::string::npos) return SocMetric::Gpu;
    for (std::string_view total : {"system", "_in", "total"}) {
        if (lower.find(total) != std::string::npos) return SocMetric::Total;
    }
    return std::nullopt;
}

std::vector<RailSource> discover_rails(const fs::path& sysfs_root, std::vector<std::string>* searched) {
    std::vector<RailSource> rails;
    for (std::string_view driver : kIna3221DriverDirs) {
        const fs::path driver_dir = sysfs_root / driver;
        if (searched) searched->push_back(driver_dir.string());
        if (!dir_exists(driver_dir)) continue;
        for (const auto& dir : candidate_dirs(driver_dir)) discover_in(dir, rails);
    }
    return rails;
}

Result<Watts> read_power(const RailSource& rail) {
    if (rail.problem) return *rail.problem;
    if (rail.power) {
        auto value = read_sysfs_number(*rail.power);
        if (!value) return value.error();
        return Watts(*value * rail.watts_per_unit);
    }
    if (!rail.voltage || !rail.current) {
        return Error{ErrorCode::InvalidState, fmt::format("rail {} has no value files", rail.name), {}, 0};
    }
    auto millivolts = read_sysfs_number(*rail.voltage);
    if (!millivolts) return millivolts.error();
    auto milliamps = read_sysfs_number(*rail.current);
    if (!milliamps) return milliamps.error();
    return Watts(*millivolts * *milliamps * rail.watts_per_unit);
}

}  // namespace zeus::soc
