// The engine behind CarbonEmissionMonitor and EnergyCostMonitor: windows on
// an EnergyMonitor, split into UTC hours by a second "segment" window that a
// background thread ends and begins again at every hour boundary, and each
// hour charged at a rate from a provider (with gap filling and fallbacks
// flagged). The monitors only name the fields.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "zeus/carbon/hourly_monitor_options.hpp"
#include "zeus/carbon/window_charge.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::carbon {

struct ChargedWindow {
    Measurement measurement;
    std::optional<std::map<unsigned, double>> gpu;
    std::optional<std::map<unsigned, double>> cpu;
    std::optional<std::map<unsigned, double>> dram;
    std::optional<double> total;
    ChargeProvenance provenance;
};

struct RateSource {
    // "carbon intensity" or "electricity price", for messages.
    std::string what;
    // Provider, zone and unit, asked at each window's end (a provider may learn its zone late).
    std::function<ChargeProvenance()> describe;
    std::function<Result<std::vector<HourlyRate>>(const std::vector<UtcTime>&)> lookup;
};

class HourlyCharger {
  public:
    // `tag` keeps its EnergyMonitor window names apart from the user's ("carbon", "cost").
    HourlyCharger(EnergyMonitor& energy, std::string tag, RateSource source, HourlyMonitorOptions options);
    ~HourlyCharger();
    HourlyCharger(const HourlyCharger&) = delete;
    HourlyCharger& operator=(const HourlyCharger&) = delete;

    // own_total = false: only the hourly split; the caller measures the
    // window itself and hands its Measurement to end().
    Status begin(std::string_view key, bool sync, bool own_total = true);
    Result<ChargedWindow> end(std::string_view key, bool sync, const Measurement* measured = nullptr);
    void poll();

  private:
    struct Slice {
        Seconds time{0.0};
        std::map<unsigned, double> gpu, cpu, dram;  // joules inside the hour
    };
    struct Window {
        std::string main_name;  // empty: the caller measures the total
        std::string segment_name;
        std::chrono::system_clock::time_point segment_start;
        std::map<UtcTime, Slice> slices;
        std::vector<std::string> warnings;
    };

    void attribute(Window& window, const Measurement& segment, std::chrono::system_clock::time_point from,
                   std::chrono::system_clock::time_point to) const;
    void remember(const std::vector<HourlyRate>& rates);
    ChargedWindow charge(Window window, Measurement measurement);
    // Asks the provider for the hours it has not given yet; its error when it failed.
    std::optional<Error> look_up_missing_rates(const std::vector<UtcTime>& hours);
    // The provider's value of the nearest hour within max_gap_hours (the
    // earlier on a tie). Called with rates_mutex_ held.
    [[nodiscard]] std::optional<HourlyRate> nearest_known_rate(UtcTime hour) const;
    // Each hour's rate: the provider's, the nearest hour's or the configured
    // fallback (flagged with why), or none, listed in `without_value`.
    std::map<UtcTime, HourCharge> rate_hours(const std::vector<UtcTime>& hours,
                                             const std::optional<Error>& provider_error, const std::string& provider,
                                             std::vector<std::string>& without_value);
    // Each device's energy in `energies` split over `hours` into `charges`;
    // returns each device's amount at the hours' rates.
    static std::map<unsigned, double> split_by_hour(const Window& window, const std::vector<UtcTime>& hours,
                                                    const std::map<unsigned, double>& energies,
                                                    std::map<unsigned, double> Slice::*member,
                                                    std::map<UtcTime, HourCharge>& charges);
    void run();

    EnergyMonitor& energy_;
    std::string tag_;
    RateSource source_;
    HourlyMonitorOptions options_;

    std::mutex windows_mutex_;
    std::map<std::string, Window, std::less<>> windows_;

    std::mutex rates_mutex_;
    std::map<UtcTime, HourlyRate> known_;  // every rate the provider gave, by hour
    std::optional<UtcTime> prefetched_hour_;

    std::mutex thread_mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace zeus::carbon
