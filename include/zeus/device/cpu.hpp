// CPU package and DRAM energy from RAPL (Intel and AMD) through the Linux
// powercap sysfs. Every raw counter goes through an AccumulatedCounter, and
// each Cpus set owns one CounterSampler thread that reads the counters often
// enough never to miss a wrap, so totals are monotonic 64-bit joules however
// long a window is. An unreadable counter is an Error naming the file and the
// fix, never a zero.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/device/counter_sampler.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {

// The bounds CpuOptions starts from: no package or DRAM draws near them.
inline constexpr Watts kDefaultMaxPackagePower{1000.0};
inline constexpr Watts kDefaultMaxDramPower{1000.0};

struct CpuOptions {
    // A powercap directory holding intel-rapl:N zones, directly or in an
    // intel-rapl/ subdirectory (so both /sys/class/powercap and
    // /sys/class/powercap/intel-rapl work). When set, it is the only place
    // looked at. Tests point it at a generated tree.
    std::optional<std::string> powercap_root;
    // Searched in order when powercap_root is unset; the first with a usable
    // package zone wins. /zeus_sys is where containers mount the host's sysfs,
    // because Docker masks /sys/devices/virtual/powercap.
    std::vector<std::string> powercap_search = {"/sys/class/powercap", "/zeus_sys/class/powercap"};
    // Roots current_rapl_zone() reads (/proc/<pid>/stat, cpuN/topology/).
    std::string proc_root = "/proc";
    std::string cpu_sysfs_root = "/sys/devices/system/cpu";
    // Conservative bounds: a counter step implying more power than this is a
    // glitch, and the sampler reads at least twice per wrap at this power.
    // They are also the power ceilings of packages whose powercap zone
    // states no short-term limit (Cpu::power_ceiling).
    Watts max_package_power = kDefaultMaxPackagePower;
    Watts max_dram_power = kDefaultMaxDramPower;
    // Background read period; default: derived from the counter ranges and
    // the power bounds (about 30-60 s on real RAPL). Longer than that risks
    // missed wraps, which are then flagged as late reads.
    std::optional<std::chrono::nanoseconds> sample_period;
    // When set, energy is read through this zeusd instead of the local
    // powercap sysfs (which needs root), and only through it: a daemon that
    // cannot serve cpu-read gives an empty set saying why. See
    // docs/zeusd-client.md.
    std::optional<ZeusdConfig> zeusd;

    // ZEUS_POWERCAP_ROOT (empty counts as unset) sets powercap_root;
    // ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT / ZEUSD_TOKEN set zeusd (a malformed
    // ZEUSD_HOST_PORT is an error).
    static Result<CpuOptions> from_environment();
};

struct CpuIdentity {
    unsigned index = 0;       // position in the Cpus set
    unsigned zone_index = 0;  // N of intel-rapl:N (what current_rapl_zone() returns)
    std::string zone_name;    // "package-0", or "package-0-die-1" on multi-die parts
    std::string path;         // the package zone's directory
    std::optional<std::string> dram_path;  // its dram sub-zone, when there is one
};

// Energy since the Cpus set was opened, with how each total was obtained:
// stats.exact() is false when a reset, glitch or late read made it uncertain.
struct CpuEnergy {
    Joules package;
    std::optional<Joules> dram;  // nullopt only when the package has no DRAM zone
    CounterStats package_stats;
    std::optional<CounterStats> dram_stats;

    [[nodiscard]] bool exact() const { return package_stats.exact() && (!dram_stats || dram_stats->exact()); }
};

// The most power a package and its DRAM can draw over a few milliseconds:
// what an energy estimated past a reading can be off by, per second of
// extrapolation (sampled window edges, docs/monitoring.md).
struct CpuPowerCeiling {
    Watts package = kDefaultMaxPackagePower;
    Watts dram = kDefaultMaxDramPower;
};

class Cpu {
  public:
    virtual ~Cpu() = default;
    Cpu() = default;
    Cpu(const Cpu&) = delete;
    Cpu& operator=(const Cpu&) = delete;

    [[nodiscard]] virtual const CpuIdentity& identity() const = 0;
    // OK, or why the package counter cannot be read (e.g. NoPermission with the fixes).
    [[nodiscard]] virtual Status status() const = 0;
    [[nodiscard]] bool available() const { return status().ok(); }
    // Whether the package has a DRAM sub-zone; dram_status() says whether it can be read.
    [[nodiscard]] virtual bool has_dram() const = 0;
    [[nodiscard]] virtual Status dram_status() const = 0;

    // Reads the counters now. total_energy() fails when either the package
    // or an existing DRAM counter fails: a DRAM reading is never dropped
    // silently. The single-counter calls let a caller keep the other.
    [[nodiscard]] virtual Result<CpuEnergy> total_energy() const = 0;
    [[nodiscard]] virtual Result<Joules> package_energy() const = 0;
    [[nodiscard]] virtual Result<Joules> dram_energy() const = 0;  // NotSupported without a DRAM zone
    // Totals and counter stats as of the last read, by the user or the
    // sampler thread, without touching the hardware. Errors as total_energy().
    [[nodiscard]] virtual Result<CpuEnergy> accumulated() const = 0;
    // RAPL: the zone's short-term (or peak) power limit where powercap
    // states one, else CpuOptions' max_package_power / max_dram_power.
    [[nodiscard]] virtual CpuPowerCeiling power_ceiling() const { return {}; }
};

class Cpus {
  public:
    // Never throws for device problems: no RAPL gives an empty set whose
    // status() says why and how to fix it; an unreadable zone keeps its
    // place and reports its error (and a line in warnings()).
    static Cpus open(const CpuOptions& options);

    Cpus();
    Cpus(Cpus&&) noexcept;
    Cpus& operator=(Cpus&&) noexcept;
    ~Cpus();

    [[nodiscard]] std::size_t size() const { return cpus_.size(); }
    [[nodiscard]] bool empty() const { return cpus_.empty(); }
    // By position; throws ZeusError naming the valid range.
    [[nodiscard]] Cpu& operator[](std::size_t index) const;
    [[nodiscard]] Result<Cpu*> at(std::size_t index) const;
    // By N of intel-rapl:N, e.g. with the result of current_rapl_zone().
    [[nodiscard]] Result<Cpu*> by_zone(unsigned zone_index) const;
    [[nodiscard]] auto begin() const { return cpus_.begin(); }
    [[nodiscard]] auto end() const { return cpus_.end(); }

    // OK when package zones were found; otherwise why there are none, with the fix.
    [[nodiscard]] const Status& status() const { return status_; }
    [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
    // The directory the zones were found in; empty when none.
    [[nodiscard]] const std::string& powercap_root() const { return root_; }
    // The background reader's period; nullopt when no counter is readable.
    [[nodiscard]] std::optional<std::chrono::nanoseconds> sample_period() const;
    // Joins the background reader (a host's exit, before its own teardown);
    // counters are then read only when asked. Idempotent.
    void stop_sampling() {
        if (sampler_) sampler_->stop();
    }

    // For backends and tests: assemble a set from parts. The sampler (if
    // any) reads counters the CPUs share; it is stopped first on destruction.
    Cpus(std::vector<std::unique_ptr<Cpu>> cpus, Status status, std::vector<std::string> warnings, std::string root,
         std::unique_ptr<CounterSampler> sampler);

  private:
    std::vector<std::unique_ptr<Cpu>> cpus_;
    Status status_;
    std::vector<std::string> warnings_;
    std::string root_;
    std::unique_ptr<CounterSampler> sampler_;  // last: destroyed (thread joined) first
};

// The N of the intel-rapl:N zone of the package `pid` last ran on (default:
// this process), as the original's get_current_rapl_zone_id: the CPU is field
// 39 of /proc/<pid>/stat, its package (and die) come from
// cpuN/topology/physical_package_id (and die_id), and the zone is the one
// named package-<p>-die-<d>, else package-<p>. NotSupported when no zone
// matches. Uses options' proc_root, cpu_sysfs_root and powercap search.
[[nodiscard]] Result<unsigned> current_rapl_zone(std::optional<pid_t> pid, const CpuOptions& options);

}  // namespace zeus
