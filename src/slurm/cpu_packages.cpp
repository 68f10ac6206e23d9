#include "slurm/cpu_packages.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

namespace zeus::slurm {
namespace {

namespace fs = std::filesystem;

std::optional<unsigned> parse_unsigned(std::string_view text) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<std::string> first_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    return line;
}

// cpu<N> → N; other entries (cpufreq, cpuidle, ...) → nullopt.
std::optional<unsigned> cpu_number(const std::string& entry) {
    if (!entry.starts_with("cpu")) return std::nullopt;
    return parse_unsigned(std::string_view(entry).substr(3));
}

// An offline CPU has online = 0 (and usually no topology); cpu0 often has no online file.
bool is_online(const fs::path& cpu_dir) {
    const auto online = first_line(cpu_dir / "online");
    return !online || *online != "0";
}

std::string cpu_count_words(std::size_t n) { return fmt::format("{} CPU{}", n, n == 1 ? "" : "s"); }

}  // namespace

Result<PackageCpus> read_package_cpus(const std::string& sysfs_root) {
    const fs::path cpus = fs::path(sysfs_root) / "devices/system/cpu";
    std::error_code ec;
    PackageCpus topology;
    for (const auto& entry : fs::directory_iterator(cpus, ec)) {
        const auto cpu = cpu_number(entry.path().filename().string());
        if (!cpu || !is_online(entry.path())) continue;
        const auto text = first_line(entry.path() / "topology/physical_package_id");
        const auto package = text ? parse_unsigned(*text) : std::nullopt;
        if (!package) {
            return Error{ErrorCode::NotSupported,
                         fmt::format("CPU {} has no readable package id in {}", *cpu,
                                     (entry.path() / "topology/physical_package_id").string()),
                         "the kernel exposes CPU topology in sysfs; without it the plugin cannot tell whole packages",
                         0};
        }
        topology[*package].insert(*cpu);
    }
    if (ec || topology.empty()) {
        return Error{ErrorCode::NotSupported, fmt::format("no CPU topology under {}", cpus.string()),
                     "mount sysfs at /sys on the compute node", 0};
    }
    return topology;
}

std::set<unsigned> allowed_cpus() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    std::set<unsigned> cpus;
    if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return cpus;
    for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &mask)) cpus.insert(cpu);
    }
    return cpus;
}

std::optional<unsigned> slurm_cpus_on_node(const EnvironmentLookup& lookup) {
    if (auto on_node = lookup("SLURM_CPUS_ON_NODE")) return parse_unsigned(*on_node);
    auto per_node = lookup("SLURM_JOB_CPUS_PER_NODE");
    if (!per_node) return std::nullopt;
    // "8" or "8(x2)": one count for every node; "8,4(x2)" differs per node and is not used.
    const std::string_view value = *per_node;
    return parse_unsigned(value.substr(0, value.find('(')));
}

PackageHolding whole_packages(const PackageCpus& topology, const std::set<unsigned>& allowed,
                              std::optional<unsigned> slurm_cpus) {
    PackageHolding holding;
    if (!slurm_cpus) {
        holding.reason =
            "shares packages with other jobs, as far as the plugin can tell: Slurm gave it no CPU count "
            "(SLURM_CPUS_ON_NODE)";
        return holding;
    }
    if (*slurm_cpus != allowed.size()) {
        holding.reason = fmt::format(
            "shares packages with other jobs: Slurm gave it {} on this node, but it may run on {} (its CPUs are not "
            "confined to its own, so other jobs may run on the same packages)",
            cpu_count_words(*slurm_cpus), cpu_count_words(allowed.size()));
        return holding;
    }
    for (const auto& [package, cpus] : topology) {
        if (std::includes(allowed.begin(), allowed.end(), cpus.begin(), cpus.end()))
            holding.packages.push_back(package);
    }
    if (holding.packages.empty()) {
        holding.reason = fmt::format("shares packages with other jobs: its {} cover no whole CPU package",
                                     cpu_count_words(allowed.size()));
    }
    holding.whole_node = holding.packages.size() == topology.size();
    return holding;
}

PackageHolding held_packages(const std::string& sysfs_root, const EnvironmentLookup& lookup) {
    auto topology = read_package_cpus(sysfs_root);
    if (!topology.ok()) {
        PackageHolding holding;
        holding.reason = topology.error().describe();
        return holding;
    }
    return whole_packages(*topology, allowed_cpus(), slurm_cpus_on_node(lookup));
}

}  // namespace zeus::slurm
