// A system-on-chip whose CPU and GPU share one board: NVIDIA Jetson now,
// Apple silicon later. A SoC reports energy per metric (cpu, gpu, total) and,
// where the hardware has them, per power rail. Every value says how it was
// obtained and every missing one says why: an unreadable rail is an Error
// naming the file and the fix, never 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/counter_accumulator.hpp"
#include "zeus/device/gpu.hpp"  // Capability
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {

// What a SoC can measure. Jetson has these three; Apple silicon will add its
// own (dram, ane, ...) here.
enum class SocMetric { Cpu, Gpu, Total };
[[nodiscard]] std::string_view to_string(SocMetric metric);
inline constexpr SocMetric kSocMetrics[] = {SocMetric::Cpu, SocMetric::Gpu, SocMetric::Total};

// How a SoC's energy was obtained.
enum class SocEnergySource {
    IntegratedPower,  // power sampled by a background thread and integrated (trapezoid rule, monotonic clock)
    EnergyCounter,    // an energy counter kept by the hardware or the OS (Apple's IOReport)
};
[[nodiscard]] std::string_view to_string(SocEnergySource source);

struct SocMetricEnergy {
    SocMetric metric;
    Result<Joules> energy;
};

struct SocRailEnergy {
    std::string rail;
    std::optional<SocMetric> metric;  // nullopt: a rail that counts towards no metric
    Result<Joules> energy;
};

// Energy accumulated since the SoC was opened (per rail: since its first good
// sample). Subtract two with since() to get a window's energy.
struct SocEnergy {
    Seconds elapsed{0};  // monotonic time since the SoC was opened
    SocEnergySource source = SocEnergySource::IntegratedPower;
    std::vector<SocMetricEnergy> metrics;  // every metric the SoC has rails for, in kSocMetrics order
    std::vector<SocRailEnergy> rails;

    // The metric's energy, or why not (also when the SoC does not have it).
    [[nodiscard]] Result<Joules> metric(SocMetric m) const;
    [[nodiscard]] Result<Joules> rail(std::string_view name) const;
    // This minus `begin`, entry by entry; an entry that is an error in either is an error.
    [[nodiscard]] SocEnergy since(const SocEnergy& begin) const;
};

struct SocMetricInfo {
    SocMetric metric;
    Capability support;               // why not, with the fix, when unsupported
    std::vector<std::string> rails;   // the rails summed into it
};

struct SocRailStats {
    std::uint64_t samples = 0;        // good power readings
    std::uint64_t failed_reads = 0;   // readings that were errors (the gap is bridged by the trapezoid)
    std::uint64_t negative_readings = 0;  // counted as 0 W (sensor offset near zero current)
    Seconds longest_gap{0};           // longest interval between two good samples: bounds the integration error
    CounterStats counter;             // the monotonic total's bookkeeping (glitches: readings implying absurd power)
};

// One power rail as last sampled.
struct SocRail {
    std::string name;                 // the driver's label, e.g. "VDD_IN"
    std::optional<SocMetric> metric;  // nullopt: listed and integrated, but part of no metric
    std::string source;               // the files power comes from, with their units
    Status status;                    // the last reading: OK, or the error with the file and the fix
    std::optional<Watts> power;       // the last reading; nullopt when it failed
    Joules energy{0};                 // integrated since the first good sample
    SocRailStats stats;
};

class Soc {
  public:
    virtual ~Soc() = default;
    Soc() = default;
    Soc(const Soc&) = delete;
    Soc& operator=(const Soc&) = delete;

    // "NVIDIA Jetson", or "none".
    [[nodiscard]] virtual std::string_view name() const = 0;
    // OK, or why this machine's SoC cannot be measured, with the fix.
    [[nodiscard]] virtual Status status() const = 0;
    [[nodiscard]] bool available() const { return status().ok(); }

    [[nodiscard]] virtual SocEnergySource energy_source() const = 0;
    // Every metric this kind of SoC knows, supported or not (with the reason),
    // as of the rails' latest readings.
    [[nodiscard]] virtual std::vector<SocMetricInfo> metrics() const = 0;
    [[nodiscard]] std::vector<SocMetric> available_metrics() const;

    // Reads every rail now and returns the energy since open. An error only
    // when the SoC is unavailable; a failing rail is an error inside.
    [[nodiscard]] virtual Result<SocEnergy> total_energy() const = 0;
    // The rails as last sampled (no new reading): names, metrics, status, power, energy.
    [[nodiscard]] virtual std::vector<SocRail> rails() const = 0;
    // Joins a background sampler, if any (a host's exit, before its own
    // teardown); energy then stops accumulating. Idempotent.
    virtual void stop_sampling() {}
};

// No SoC to measure, and why (not aarch64, no Tegra release file, no rails...).
class EmptySoc final : public Soc {
  public:
    explicit EmptySoc(Error why) : why_(std::move(why)) {}
    [[nodiscard]] std::string_view name() const override { return "none"; }
    [[nodiscard]] Status status() const override { return why_; }
    [[nodiscard]] SocEnergySource energy_source() const override { return SocEnergySource::IntegratedPower; }
    [[nodiscard]] std::vector<SocMetricInfo> metrics() const override { return {}; }
    [[nodiscard]] Result<SocEnergy> total_energy() const override { return why_; }
    [[nodiscard]] std::vector<SocRail> rails() const override { return {}; }

  private:
    Error why_;
};

struct SocOptions {
    // The directory standing for /sys when looking for the INA3221 power
    // monitors: a container with the host's /sys mounted elsewhere, or a
    // test's fake tree. Environment: ZEUS_JETSON_SYSFS_ROOT. Setting it skips
    // the platform check (aarch64 and a Tegra release file) unless
    // platform_root or machine is set too: the rails found there are what counts.
    std::optional<std::string> sysfs_root;
    // How often the background thread reads every rail. The integration error
    // of a power step is at most |step| x period / 2.
    std::chrono::milliseconds sample_period{100};
    // Platform check inputs, for tests: the directory standing for "/" when
    // looking for /etc/nv_tegra_release and /usr/lib/aarch64-linux-gnu/tegra,
    // and the machine name uname() would give.
    std::optional<std::string> platform_root;
    std::optional<std::string> machine;

    // Defaults plus ZEUS_JETSON_SYSFS_ROOT (an error names the variable when
    // it is not a directory).
    static Result<SocOptions> from_environment();
};

// The board's SoC: a JetsonSoc when this is a Jetson with INA3221 rails,
// otherwise an EmptySoc whose status() says why. An error only for invalid
// options.
[[nodiscard]] Result<std::unique_ptr<Soc>> open_soc(const SocOptions& options);

// Jetson power rails from the INA3221 monitors in sysfs, sampled by a thread
// owned by this object (joined on destruction) and integrated to energy.
class JetsonSoc final : public Soc {
  public:
    // Opens the rails under `sysfs_root` (standing for /sys) without checking
    // the platform; an error when there are no rails at all.
    static Result<std::unique_ptr<JetsonSoc>> open(const std::string& sysfs_root,
                                                   std::chrono::milliseconds sample_period);
    ~JetsonSoc() override;

    [[nodiscard]] std::string_view name() const override { return "NVIDIA Jetson"; }
    [[nodiscard]] Status status() const override;
    [[nodiscard]] SocEnergySource energy_source() const override { return SocEnergySource::IntegratedPower; }
    [[nodiscard]] std::vector<SocMetricInfo> metrics() const override;
    [[nodiscard]] Result<SocEnergy> total_energy() const override;
    [[nodiscard]] std::vector<SocRail> rails() const override;
    void stop_sampling() override;
    [[nodiscard]] std::chrono::nanoseconds sample_period() const;

  private:
    struct Impl;
    explicit JetsonSoc(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace zeus
