// What a real GPU's driver does, measured through the device layer and zeusd:
// the latency of each NVML call the monitors make, the energy counter's
// refresh period, counter energy against integrated power, and a power-limit
// change made and put back both directly and through zeusd. Prints one JSON
// document; scripts/validate-hardware.sh runs it and writes docs/hardware.md.
//
//   zeus_hardware_check [--quick] [--zeusd PATH] [--gpu INDEX]
//
// Every setting it changes is put back before it exits, also when a step
// fails; SIGINT and SIGTERM are held off while a limit is changed.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/device/gpus.hpp"
#include "zeus/device/zeusd_client.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/monitor/power_monitor.hpp"

extern char** environ;

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
    bool quick = false;
    std::string zeusd;
    unsigned gpu = 0;
};

double microseconds(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

json distribution(std::vector<double> values) {
    if (values.empty()) return nullptr;
    std::sort(values.begin(), values.end());
    auto at = [&](double q) { return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))]; };
    return {
        {"n", values.size()}, {"min", values.front()}, {"median", at(0.5)}, {"p90", at(0.9)}, {"max", values.back()}};
}

// Times `call` `reps` times; a failing call is reported with its error, not timed.
json time_call(const std::function<zeus::Status()>& call, int reps) {
    std::vector<double> us;
    for (int i = 0; i < reps; ++i) {
        const auto start = Clock::now();
        const zeus::Status status = call();
        const auto elapsed = Clock::now() - start;
        if (!status) return {{"error", status.error().describe()}};
        us.push_back(microseconds(elapsed));
    }
    return distribution(us);
}

template <typename T>
zeus::Status ok_or_error(const zeus::Result<T>& result) {
    if (result) return {};
    return zeus::Status(result.error());
}

json call_latencies(const zeus::Gpu& gpu, int reps) {
    using zeus::PowerDomain;
    json out;
    out["total_energy (nvmlDeviceGetTotalEnergyConsumption)"] =
        time_call([&] { return ok_or_error(gpu.total_energy()); }, reps);
    out["energy_snapshot (the window edge's read)"] =
        time_call([&] { return ok_or_error(gpu.energy_snapshot()); }, reps);
    out["power instant (nvmlDeviceGetFieldValues)"] =
        time_call([&] { return ok_or_error(gpu.power(PowerDomain::DeviceInstant)); }, reps);
    out["power average (nvmlDeviceGetFieldValues)"] =
        time_call([&] { return ok_or_error(gpu.power(PowerDomain::DeviceAverage)); }, reps);
    out["temperature (nvmlDeviceGetTemperature)"] = time_call([&] { return ok_or_error(gpu.temperature()); }, reps);
    out["power_limit (nvmlDeviceGetPowerManagementLimit)"] =
        time_call([&] { return ok_or_error(gpu.power_limit()); }, reps);
    return out;
}

// Polls the counter for `budget` and returns the intervals between changes.
json counter_refresh(const zeus::Gpu& gpu, std::chrono::milliseconds budget) {
    std::vector<double> intervals_ms;
    std::optional<std::uint64_t> last;
    std::optional<Clock::time_point> last_change;
    const auto end = Clock::now() + budget;
    while (Clock::now() < end) {
        const auto energy = gpu.total_energy();
        if (!energy) return {{"error", energy.error().describe()}};
        const auto now = Clock::now();
        const auto value = static_cast<std::uint64_t>(energy->count());
        if (last && value != *last) {
            if (last_change)
                intervals_ms.push_back(std::chrono::duration<double, std::milli>(now - *last_change).count());
            last_change = now;
        }
        last = value;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    json out = distribution(intervals_ms);
    if (out.is_null()) return {{"error", "the counter did not change twice within the budget"}};
    return out;
}

// Counter windows against the power timeline integrated over the same span.
json counter_vs_power(const zeus::Gpus& gpus, unsigned index, const std::vector<double>& seconds) {
    zeus::PowerMonitorOptions power_options;
    power_options.gpu_indices = {index};
    power_options.domains = {zeus::PowerDomain::DeviceInstant};
    auto power = zeus::PowerMonitor::start(gpus, power_options);
    if (!power) return {{"error", power.error().describe()}};
    zeus::EnergyMonitorOptions energy_options;
    energy_options.gpu_indices = {index};
    auto energy = zeus::EnergyMonitor::open(gpus, nullptr, nullptr, energy_options);
    if (!energy) return {{"error", energy.error().describe()}};
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few samples before the first window
    json rows = json::array();
    for (double s : seconds) {
        const auto begun = (*energy)->begin_window("check", false);
        if (!begun) return {{"error", begun.error().describe()}};
        const auto start = zeus::MonitorClock::now();
        std::this_thread::sleep_for(std::chrono::duration<double>(s));
        const auto end = zeus::MonitorClock::now();
        const auto measured = (*energy)->end_window("check", false);
        if (!measured) return {{"error", measured.error().describe()}};
        std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the sample after the edge
        const auto integrated = (*power)->energy(start, end);
        json row{{"seconds", s}, {"counter_j", measured->gpu_energy.at(index).energy.count()}};
        if (integrated) {
            const double p = integrated->at(index).count();
            row["integrated_power_j"] = p;
            row["counter_over_power"] = p > 0 ? row["counter_j"].get<double>() / p : NAN;
        } else {
            row["integrated_power_error"] = integrated.error().describe();
        }
        rows.push_back(row);
    }
    (*power)->stop();
    return rows;
}

// The same windows measured by both edge modes at once: each mode's energy,
// its error bound, and the mean time one begin+end pair took in each.
json window_modes(const zeus::Gpus& gpus, unsigned index, const std::vector<double>& seconds) {
    std::map<std::string, std::unique_ptr<zeus::EnergyMonitor>> monitors;
    for (const auto& [name, edges] : {std::pair{"synchronous", zeus::WindowEdges::Synchronous},
                                      std::pair{"sampled", zeus::WindowEdges::Sampled}}) {
        zeus::EnergyMonitorOptions options;
        options.gpu_indices = {index};
        options.edges = edges;
        auto monitor = zeus::EnergyMonitor::open(gpus, nullptr, nullptr, options);
        if (!monitor) return {{"error", monitor.error().describe()}};
        (void)(*monitor)->begin_window("warm-up", false);
        monitors[name] = std::move(monitor).value();
    }
    json rows = json::array();
    for (double s : seconds) {
        for (auto& [name, monitor] : monitors) (void)monitor->begin_window("modes", false);
        std::this_thread::sleep_for(std::chrono::duration<double>(s));
        json row{{"seconds", s}};
        for (auto& [name, monitor] : monitors) {
            const auto measured = monitor->end_window("modes", false);
            if (!measured) return {{"error", measured.error().describe()}};
            const auto& v = measured->gpu_energy.at(index);
            row[name + "_j"] = v.energy.count();
            row[name + "_bound_j"] = v.edge_error_bound ? v.edge_error_bound->count() : 0.0;
        }
        rows.push_back(row);
    }
    json pair_us;
    for (auto& [name, monitor] : monitors) {
        constexpr int kPairs = 200;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kPairs; ++i) {
            (void)monitor->begin_window("pair", false);
            (void)monitor->end_window("pair", false);
        }
        pair_us[name] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kPairs;
    }
    return {{"windows", rows}, {"pair_us", pair_us}};
}

// Puts a GPU's power limit back on every path out of the check.
class LimitRestorer {
  public:
    LimitRestorer(zeus::Gpu& gpu, zeus::Milliwatts original) : gpu_(gpu), original_(original) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set, &previous_);
    }
    LimitRestorer(const LimitRestorer&) = delete;
    LimitRestorer& operator=(const LimitRestorer&) = delete;
    ~LimitRestorer() {
        if (!restored_) (void)restore();
        pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    }
    zeus::Status restore() {
        restored_ = true;
        return gpu_.set_power_limit(original_);
    }

  private:
    zeus::Gpu& gpu_;
    zeus::Milliwatts original_;
    sigset_t previous_{};
    bool restored_ = false;
};

zeus::Milliwatts midpoint_limit(const zeus::PowerLimitConstraints& c) {
    const double mid_w = static_cast<double>(c.min.count() + c.max.count()) / 2000.0;
    return zeus::Milliwatts{std::llround(mid_w) * 1000};  // whole watts, as every driver accepts
}

json power_limit_direct(zeus::Gpu& gpu) {
    const auto original = gpu.power_limit();
    const auto constraints = gpu.power_limit_constraints();
    if (!original) return {{"error", original.error().describe()}};
    if (!constraints) return {{"error", constraints.error().describe()}};
    const zeus::Milliwatts target = midpoint_limit(*constraints);
    json out{{"original_mw", original->count()}, {"target_mw", target.count()}};
    LimitRestorer restorer(gpu, *original);
    const auto start = Clock::now();
    const zeus::Status set = gpu.set_power_limit(target);
    out["set_us"] = microseconds(Clock::now() - start);
    if (!set) out["set_error"] = set.error().describe();
    const auto read_back = gpu.power_limit();
    if (read_back) out["read_back_mw"] = read_back->count();
    const zeus::Status restored = restorer.restore();
    if (!restored) out["restore_error"] = restored.error().describe();
    const auto after = gpu.power_limit();
    if (after) out["after_restore_mw"] = after->count();
    out["restored"] = after && after->count() == original->count();
    return out;
}

// A zeusd of our own on a private socket, stopped when the check ends.
class ZeusdProcess {
  public:
    ZeusdProcess(const std::string& binary, const std::filesystem::path& socket) {
        std::vector<std::string> args{binary, "serve", "--socket-path", socket.string(), "--num-workers", "2"};
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        // The daemon's own lines go to stderr: stdout is this program's one JSON document.
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
        if (posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
    }
    ZeusdProcess(const ZeusdProcess&) = delete;
    ZeusdProcess& operator=(const ZeusdProcess&) = delete;
    ~ZeusdProcess() {
        if (pid_ <= 0) return;
        kill(pid_, SIGTERM);
        int status = 0;
        waitpid(pid_, &status, 0);
    }
    [[nodiscard]] bool started() const { return pid_ > 0; }

  private:
    pid_t pid_ = -1;
};

json power_limit_through_zeusd(zeus::Gpu& gpu, unsigned index, const std::string& zeusd) {
    if (zeusd.empty()) return {{"skipped", "no --zeusd given"}};
    const auto dir = std::filesystem::temp_directory_path() / ("zeus-hwcheck-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const auto socket = dir / "zeusd.sock";
    json out;
    {
        ZeusdProcess daemon(zeusd, socket);
        if (!daemon.started()) return {{"error", "cannot start " + zeusd}};
        std::shared_ptr<zeus::ZeusdClient> client;
        for (int i = 0; i < 100 && !client; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (auto c = zeus::ZeusdClient::connect(zeus::ZeusdConfig::unix_socket(socket.string()))) client = *c;
        }
        if (!client) return {{"error", "zeusd did not answer on " + socket.string() + " within 5 s"}};
        const auto original = gpu.power_limit();
        const auto constraints = gpu.power_limit_constraints();
        if (!original || !constraints) return {{"error", "cannot read the power limit"}};
        const zeus::Milliwatts target = midpoint_limit(*constraints);
        out = {{"original_mw", original->count()}, {"target_mw", target.count()}};
        LimitRestorer restorer(gpu, *original);  // zeusd puts it back too; this covers a daemon that failed
        const auto start = Clock::now();
        const zeus::Status set = client->set_power_limit({index}, target, true);
        out["set_us"] = microseconds(Clock::now() - start);
        if (!set) out["set_error"] = set.error().describe();
        const auto read_back = client->power_limit({index});
        if (read_back) out["read_back_mw"] = read_back->at(index).count();
        const zeus::Status restored = client->set_power_limit({index}, *original, true);
        if (!restored) out["restore_error"] = restored.error().describe();
        (void)restorer.restore();
        const auto after = gpu.power_limit();
        if (after) out["after_restore_mw"] = after->count();
        out["restored"] = after && after->count() == original->count();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return out;
}

int run(const Options& options) {
    auto gpu_options = zeus::GpuOptions::from_environment();
    if (!gpu_options) {
        std::cerr << "zeus_hardware_check: " << gpu_options.error().describe() << "\n";
        return 2;
    }
    zeus::Gpus gpus = zeus::Gpus::open(*gpu_options);
    if (gpus.empty()) {
        std::cerr << "zeus_hardware_check: no GPU: " << gpus.status().error().describe() << "\n";
        return 1;
    }
    if (options.gpu >= gpus.size()) {
        std::cerr << "zeus_hardware_check: --gpu " << options.gpu << " is out of range (" << gpus.size()
                  << " GPUs visible; use 0 to " << gpus.size() - 1 << ")\n";
        return 2;
    }
    const auto& info = gpus.backend_info();
    zeus::Gpu& gpu = gpus[options.gpu];
    json report;
    report["gpu"] = {{"index", options.gpu}, {"name", gpu.identity().name}, {"count", gpus.size()}};
    report["driver"] = {{"backend", info.backend},
                        {"library", info.library_path},
                        {"simulated", info.simulated},
                        {"driver_version", info.driver_version},
                        {"nvml_version", info.nvml_version}};
    report["quick"] = options.quick;
    report["call_latency_us"] = call_latencies(gpu, options.quick ? 50 : 500);
    report["energy_counter_refresh_ms"] = counter_refresh(gpu, std::chrono::milliseconds(options.quick ? 700 : 3000));
    const std::vector<double> windows =
        options.quick ? std::vector<double>{0.3, 0.6, 1.0} : std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    report["counter_vs_integrated_power"] = counter_vs_power(gpus, options.gpu, windows);
    report["window_modes"] = window_modes(gpus, options.gpu, windows);
    report["power_limit_direct"] = power_limit_direct(gpu);
    report["power_limit_through_zeusd"] = power_limit_through_zeusd(gpu, options.gpu, options.zeusd);
    std::cout << report.dump(2) << "\n";
    const bool restored = report["power_limit_direct"].value("restored", true) &&
                          report["power_limit_through_zeusd"].value("restored", true);
    if (!restored) std::cerr << "zeus_hardware_check: a power limit was NOT restored; check nvidia-smi -q -d POWER\n";
    return restored ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "zeus_hardware_check: " << arg << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (arg == "--quick") {
            options.quick = true;
        } else if (arg == "--zeusd") {
            options.zeusd = value();
        } else if (arg == "--gpu") {
            const std::string text = value();
            char* end = nullptr;
            const unsigned long parsed = std::strtoul(text.c_str(), &end, 10);
            if (text.empty() || *end != '\0' || parsed > 1024) {
                std::cerr << "zeus_hardware_check: --gpu needs a GPU index such as 0, got '" << text << "'\n";
                return 2;
            }
            options.gpu = static_cast<unsigned>(parsed);
        } else {
            std::cerr << "zeus_hardware_check: unknown option '" << arg
                      << "' (usage: zeus_hardware_check [--quick] [--zeusd PATH] [--gpu INDEX])\n";
            return 2;
        }
    }
    return run(options);
}
