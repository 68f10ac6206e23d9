// The SoC interface's shared parts and open_soc: the platform check that
// decides between a JetsonSoc and an EmptySoc that says why.
#include "zeus/device/soc.hpp"

#include <sys/utsname.h>

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "zeus/platform/environment.hpp"

namespace zeus {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSysfsRootVariable = "ZEUS_JETSON_SYSFS_ROOT";
constexpr std::chrono::milliseconds kMinSamplePeriod{1};
constexpr std::chrono::milliseconds kMaxSamplePeriod{10'000};

Error missing(std::string what) {
    return Error{ErrorCode::NotSupported, std::move(what), {}, 0};
}

template <class Entry>
Result<Joules> find(const std::vector<Entry>& entries, auto matches, std::string what) {
    for (const auto& e : entries) {
        if (matches(e)) return e.energy;
    }
    return missing(std::move(what));
}

Result<Joules> difference(const Result<Joules>& end, const Result<Joules>& begin) {
    if (!end) return end.error();
    if (!begin) return begin.error();
    return *end - *begin;
}

std::string machine_name() {
    utsname u{};
    if (::uname(&u) != 0) return "unknown";
    return u.machine;
}

bool path_exists(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

std::unique_ptr<Soc> empty(Error why) { return std::make_unique<EmptySoc>(std::move(why)); }

}  // namespace

std::string_view to_string(SocMetric metric) {
    switch (metric) {
        case SocMetric::Cpu: return "cpu";
        case SocMetric::Gpu: return "gpu";
        case SocMetric::Total: return "total";
    }
    return "total";
}

std::string_view to_string(SocEnergySource source) {
    switch (source) {
        case SocEnergySource::IntegratedPower: return "integrated power";
        case SocEnergySource::EnergyCounter: return "energy counter";
    }
    return "integrated power";
}

Result<Joules> SocEnergy::metric(SocMetric m) const {
    return find(metrics, [m](const SocMetricEnergy& e) { return e.metric == m; },
                fmt::format("this SoC has no {} energy", to_string(m)));
}

Result<Joules> SocEnergy::rail(std::string_view name) const {
    return find(rails, [name](const SocRailEnergy& e) { return e.rail == name; },
                fmt::format("this SoC has no rail named {}", name));
}

SocEnergy SocEnergy::since(const SocEnergy& begin) const {
    SocEnergy out;
    out.elapsed = elapsed - begin.elapsed;
    out.source = source;
    for (const auto& e : metrics) out.metrics.push_back({e.metric, difference(e.energy, begin.metric(e.metric))});
    for (const auto& e : rails) out.rails.push_back({e.rail, e.metric, difference(e.energy, begin.rail(e.rail))});
    return out;
}

std::vector<SocMetric> Soc::available_metrics() const {
    std::vector<SocMetric> out;
    for (const auto& m : metrics()) {
        if (m.support.supported) out.push_back(m.metric);
    }
    return out;
}

Result<SocOptions> SocOptions::from_environment() {
    SocOptions options;
    auto root = get_env(kSysfsRootVariable);
    if (root && !root->empty()) {
        std::error_code ec;
        if (!fs::is_directory(*root, ec)) {
            return Error{ErrorCode::InvalidConfig,
                         fmt::format("{}=\"{}\" is not a directory", kSysfsRootVariable, *root),
                         fmt::format("set {} to the folder standing for a Jetson's /sys (e.g. the host's /sys "
                                     "mounted in a container), or unset it",
                                     kSysfsRootVariable),
                         0};
        }
        options.sysfs_root = *root;
    }
    return options;
}

Result<std::unique_ptr<Soc>> open_soc(const SocOptions& options) {
    if (options.sample_period < kMinSamplePeriod || options.sample_period > kMaxSamplePeriod) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("SocOptions::sample_period of {} ms is out of range", options.sample_period.count()),
                     fmt::format("use {} to {} ms (100 ms is the default)", kMinSamplePeriod.count(),
                                 kMaxSamplePeriod.count()),
                     0};
    }
    const bool check_platform = !options.sysfs_root || options.platform_root || options.machine;
    if (check_platform) {
        const std::string machine = options.machine.value_or(machine_name());
        if (machine != "aarch64") {
            return empty(Error{ErrorCode::NotSupported,
                               fmt::format("no NVIDIA Jetson: this machine is {}, Jetson boards are aarch64", machine),
                               fmt::format("to read a Jetson's rails from a copy of its /sys mounted here, set {}",
                                           kSysfsRootVariable),
                               0});
        }
        const fs::path root = options.platform_root.value_or("/");
        const fs::path release = root / "etc/nv_tegra_release";
        const fs::path tegra_libs = root / "usr/lib/aarch64-linux-gnu/tegra";
        if (!path_exists(release) && !path_exists(tegra_libs)) {
            return empty(Error{ErrorCode::NotSupported,
                               fmt::format("no NVIDIA Jetson: neither {} nor {} exists", release.string(),
                                           tegra_libs.string()),
                               fmt::format("on a Jetson inside a container, mount /etc/nv_tegra_release from the "
                                           "host, or set {}=/sys to skip this check",
                                           kSysfsRootVariable),
                               0});
        }
    }
    auto jetson = JetsonSoc::open(options.sysfs_root.value_or("/sys"), options.sample_period);
    if (!jetson) return empty(jetson.error());
    return std::unique_ptr<Soc>(std::move(jetson).value());
}

}  // namespace zeus
