#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "device/zeusd/zeusd_cpu.hpp"
#include "device/cpu/powercap.hpp"
#include "device/cpu/rapl_cpu.hpp"
#include "device/cpu/sysfs_file.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/platform/environment.hpp"

namespace zeus {
namespace {

Cpus empty_set(Error why, std::vector<std::string> warnings = {}, std::string root = {}) {
    return Cpus({}, Status(std::move(why)), std::move(warnings), std::move(root), nullptr);
}

Status check_power_bound(const char* field, Watts w) {
    if (std::isfinite(w.count()) && w.count() > 0) return {};
    return Error{ErrorCode::InvalidConfig, fmt::format("CpuOptions::{} is {} W", field, w.count()),
                 "give a positive power bound, comfortably above what the part can draw (default 1000 W)", 0};
}

std::string describe_cpu(const CpuIdentity& id) {
    return fmt::format("CPU {} ({}, {})", id.index, id.zone_name, id.path);
}

}  // namespace

Result<CpuOptions> CpuOptions::from_environment() {
    CpuOptions options;
    if (auto root = get_env("ZEUS_POWERCAP_ROOT"); root && !root->empty()) options.powercap_root = *root;
    auto zeusd = ZeusdConfig::from_environment();
    if (!zeusd) return zeusd.error();
    options.zeusd = *zeusd;
    return options;
}

Cpus::Cpus() = default;
Cpus::Cpus(Cpus&&) noexcept = default;
Cpus& Cpus::operator=(Cpus&&) noexcept = default;
Cpus::~Cpus() = default;

Cpus::Cpus(std::vector<std::unique_ptr<Cpu>> cpus, Status status, std::vector<std::string> warnings,
           std::string root, std::unique_ptr<CounterSampler> sampler)
    : cpus_(std::move(cpus)),
      status_(std::move(status)),
      warnings_(std::move(warnings)),
      root_(std::move(root)),
      sampler_(std::move(sampler)) {}

Result<Cpu*> Cpus::at(std::size_t index) const {
    if (index < cpus_.size()) return cpus_[index].get();
    if (cpus_.empty()) {
        return Error{ErrorCode::NotFound, fmt::format("CPU {} does not exist: no RAPL CPU package is available", index),
                     status_.ok() ? std::string{} : status_.error().describe(), 0};
    }
    return Error{ErrorCode::NotFound,
                 fmt::format("CPU {} does not exist: {} CPU package{} found (indices 0 to {})", index, cpus_.size(),
                             cpus_.size() == 1 ? " was" : "s were", cpus_.size() - 1),
                 "CPU indices count RAPL package zones in order; use by_zone() for the N of intel-rapl:N", 0};
}

Cpu& Cpus::operator[](std::size_t index) const { return *at(index).value(); }

Result<Cpu*> Cpus::by_zone(unsigned zone_index) const {
    std::string zones;
    for (const auto& cpu : cpus_) {
        if (cpu->identity().zone_index == zone_index) return cpu.get();
        zones += fmt::format("{}intel-rapl:{}", zones.empty() ? "" : ", ", cpu->identity().zone_index);
    }
    return Error{ErrorCode::NotFound,
                 fmt::format("no CPU package zone intel-rapl:{} (found: {})", zone_index, zones.empty() ? "none" : zones),
                 status_.ok() ? std::string{} : status_.error().describe(), 0};
}

std::optional<std::chrono::nanoseconds> Cpus::sample_period() const {
    if (!sampler_) return std::nullopt;
    return sampler_->period();
}

Cpus Cpus::open(const CpuOptions& options) {
    if (auto s = check_power_bound("max_package_power", options.max_package_power); !s) return empty_set(s.error());
    if (auto s = check_power_bound("max_dram_power", options.max_dram_power); !s) return empty_set(s.error());
    // The daemon exists for processes that may not read RAPL themselves;
    // when it is configured, it is the only source (never a silent mix).
    if (options.zeusd) return zeusd_backend::open_cpus(options);
    auto root = rapl::find_powercap_root(options);
    if (!root) return empty_set(root.error());

    std::vector<std::unique_ptr<Cpu>> cpus;
    std::vector<std::string> warnings;
    std::vector<std::shared_ptr<AccumulatedCounter>> sampled;
    std::vector<std::string> skipped;
    for (const auto& zone : rapl::package_zone_dirs(*root)) {
        const std::string zone_label = std::filesystem::path(zone.path).filename().string();
        auto name = rapl::read_trimmed((std::filesystem::path(zone.path) / "name").string());
        // psys (platform) and other top-level zones are not a CPU package;
        // counting them as one would add the whole platform to "CPU energy".
        if (name && !name->starts_with("package-")) {
            skipped.push_back(fmt::format("{} ({})", zone_label, *name));
            continue;
        }
        CpuIdentity id;
        id.index = static_cast<unsigned>(cpus.size());
        id.zone_index = zone.index;
        id.zone_name = name ? *name : std::string{};
        id.path = zone.path;
        id.dram_path = rapl::find_dram_zone(zone.path);

        rapl::RaplCounter package = name ? rapl::open_counter(zone.path, id.zone_name, options.max_package_power)
                                         : rapl::RaplCounter{nullptr, name.error()};
        std::optional<rapl::RaplCounter> dram;
        if (id.dram_path) dram = rapl::open_counter(*id.dram_path, id.zone_name + " dram", options.max_dram_power);

        if (package.status) {
            sampled.push_back(package.counter);
        } else {
            warnings.push_back(fmt::format("{}: not measured: {}", describe_cpu(id), package.status.error().describe()));
        }
        if (dram && dram->status) {
            sampled.push_back(dram->counter);
        } else if (dram) {
            warnings.push_back(fmt::format("{}: DRAM not measured: {}", describe_cpu(id), dram->status.error().describe()));
        }
        cpus.push_back(std::make_unique<rapl::RaplCpu>(std::move(id), std::move(package), std::move(dram)));
    }
    if (!skipped.empty()) {
        std::string list;
        for (const auto& s : skipped) list += (list.empty() ? "" : ", ") + s;
        warnings.push_back(fmt::format("not CPU package zones, so not measured: {}", list));
    }
    if (cpus.empty()) {
        return empty_set(Error{ErrorCode::NotFound, fmt::format("{} has RAPL zones but no CPU package zone", *root),
                               "RAPL package zones are named package-<N>; this machine exposes only platform "
                               "zones, which Zeus does not count as CPU energy",
                               0},
                         std::move(warnings), *root);
    }

    std::unique_ptr<CounterSampler> sampler;
    if (!sampled.empty()) {
        if (options.sample_period) {
            for (const auto& c : sampled) {
                const auto safe = c->accumulator().max_read_interval();
                if (safe && *options.sample_period > *safe) {
                    warnings.push_back(fmt::format(
                        "sample period {} ms is longer than {} ms, half the time {} takes to wrap at {} W: wraps may be "
                        "missed (counted as late reads)",
                        std::chrono::duration<double, std::milli>(*options.sample_period).count(),
                        std::chrono::duration<double, std::milli>(*safe).count(), c->accumulator().spec().name,
                        c->accumulator().spec().max_power.count()));
                    break;
                }
            }
        }
        sampler = std::make_unique<CounterSampler>(std::move(sampled), options.sample_period);
    }
    return Cpus(std::move(cpus), Status(), std::move(warnings), *root, std::move(sampler));
}

}  // namespace zeus
