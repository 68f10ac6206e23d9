#include "device/cpu/powercap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "device/cpu/sysfs_file.hpp"

namespace zeus::rapl {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kZonePrefix = "intel-rapl:";

std::optional<unsigned> parse_index(std::string_view digits) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
    return value;
}

// Directory entries, without throwing (sysfs can change under us).
std::vector<fs::path> entries(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    return out;
}

bool path_exists(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

// Zone entries whose target is gone: Docker masks /sys/devices/virtual/powercap,
// leaving /sys/class/powercap/intel-rapl:N as dangling links.
std::size_t dangling_zones(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& e : entries(dir)) {
        if (package_zone_index(e.filename().string()) && !path_exists(e / "name")) ++n;
    }
    return n;
}

std::optional<std::string> zones_in(const std::string& candidate) {
    for (const fs::path& dir : {fs::path(candidate), fs::path(candidate) / "intel-rapl"}) {
        if (!package_zone_dirs(dir.string()).empty()) return dir.string();
    }
    return std::nullopt;
}

}  // namespace

std::optional<unsigned> package_zone_index(const std::string& entry_name) {
    if (!std::string_view(entry_name).starts_with(kZonePrefix)) return std::nullopt;
    return parse_index(std::string_view(entry_name).substr(kZonePrefix.size()));
}

std::vector<ZoneDir> package_zone_dirs(const std::string& dir) {
    std::vector<ZoneDir> zones;
    for (const auto& e : entries(dir)) {
        const auto index = package_zone_index(e.filename().string());
        if (index && path_exists(e / "name")) zones.push_back(ZoneDir{*index, e.string()});
    }
    std::sort(zones.begin(), zones.end(), [](const ZoneDir& a, const ZoneDir& b) { return a.index < b.index; });
    return zones;
}

Result<std::string> find_powercap_root(const CpuOptions& options) {
    const std::string container_hint =
        "in a container, bind-mount the host's /sys/class/powercap at /zeus_sys/class/powercap and "
        "/sys/devices/virtual/powercap at /zeus_sys/devices/virtual/powercap (read-only is enough)";
    if (options.powercap_root) {
        if (auto dir = zones_in(*options.powercap_root)) return *dir;
        return Error{ErrorCode::NotFound,
                     fmt::format("the powercap root {} (CpuOptions::powercap_root or ZEUS_POWERCAP_ROOT) holds no "
                                 "RAPL package zone (intel-rapl:N with a name file)",
                                 *options.powercap_root),
                     "point it at a powercap directory such as /sys/class/powercap, or unset it to search the "
                     "default places",
                     0};
    }
    std::string looked;
    std::size_t dangling = 0;
    for (const auto& candidate : options.powercap_search) {
        if (auto dir = zones_in(candidate)) return *dir;
        looked += (looked.empty() ? "" : ", ") + candidate;
        dangling += dangling_zones(candidate);
    }
    if (dangling > 0) {
        return Error{ErrorCode::NotFound,
                     fmt::format("RAPL zones are listed under {} but lead nowhere: the powercap directory is masked, "
                                 "as Docker does by default",
                                 looked),
                     container_hint + ", or set ZEUS_POWERCAP_ROOT to where it is mounted", 0};
    }
    return Error{ErrorCode::NotFound, fmt::format("no RAPL package zone under {}", looked.empty() ? "(nowhere)" : looked),
                 "RAPL needs bare metal (virtual machines rarely expose it) and the intel_rapl_msr kernel module "
                 "(sudo modprobe intel_rapl_msr; it also serves AMD Zen); " +
                     container_hint + "; or set ZEUS_POWERCAP_ROOT",
                 0};
}

std::optional<std::string> find_dram_zone(const std::string& package_dir) {
    std::vector<std::pair<unsigned, fs::path>> subzones;
    for (const auto& e : entries(package_dir)) {
        const std::string entry = e.filename().string();
        const auto colon = entry.rfind(':');
        if (!std::string_view(entry).starts_with(kZonePrefix) || colon == std::string::npos) continue;
        if (package_zone_index(entry)) continue;  // a package, not a sub-zone
        if (auto m = parse_index(std::string_view(entry).substr(colon + 1))) subzones.emplace_back(*m, e);
    }
    std::sort(subzones.begin(), subzones.end());
    for (const auto& [m, path] : subzones) {
        auto name = read_trimmed((path / "name").string());
        if (name && *name == "dram") return path.string();
    }
    return std::nullopt;
}

}  // namespace zeus::rapl
