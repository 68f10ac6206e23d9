#include "commands.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus_sim/zeus_sim.h"

namespace zeus::sim::cli {
namespace {

// Thrown with the full user-facing message; becomes exit code 1.
class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check(zeusSimStatus_t status, const char* doing) {
  if (status != ZEUS_SIM_OK) throw CliError(std::string(doing) + ": " + zeusSimLastError());
}

// Keeps the simulator open for the duration of a command.
class OpenSimulator {
 public:
  OpenSimulator() { check(zeusSimOpen(), "opening the simulator"); }
  ~OpenSimulator() { zeusSimClose(); }
  OpenSimulator(const OpenSimulator&) = delete;
  OpenSimulator& operator=(const OpenSimulator&) = delete;
};

unsigned gpu_count() {
  unsigned count = 0;
  check(zeusSimGpuCount(&count), "counting GPUs");
  return count;
}

std::vector<unsigned> parse_gpus(const std::string& text, bool allow_all) {
  const unsigned count = gpu_count();
  std::vector<unsigned> gpus;
  if (allow_all && text == "all") {
    for (unsigned i = 0; i < count; ++i) gpus.push_back(i);
    return gpus;
  }
  char* end = nullptr;
  const unsigned long index = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || index >= count) {
    throw CliError("--gpu " + text + " is not a GPU of this simulator; use an index from 0 to " +
                   std::to_string(count - 1) + (allow_all ? " or \"all\"" : ""));
  }
  gpus.push_back(static_cast<unsigned>(index));
  return gpus;
}

bool is_virtual() {
  int v = 0;
  check(zeusSimIsVirtualClock(&v), "reading the clock mode");
  return v != 0;
}

volatile std::sig_atomic_t g_stop = 0;
extern "C" void request_stop(int) { g_stop = 1; }

zeusSimGpuStatus_t gpu_status(unsigned gpu) {
  zeusSimGpuStatus_t s{};
  s.size = sizeof s;
  check(zeusSimGetGpuStatus(gpu, &s), "reading GPU status");
  return s;
}

template <typename F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const CliError& e) {
    std::fprintf(stderr, "zeus-sim: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zeus-sim: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int run_burn(const BurnOptions& o) {
  return guarded([&] {
    OpenSimulator open;
    const auto gpus = parse_gpus(o.gpu, true);
    if (!(o.utilization > 0)) throw CliError("--util must be in (0, 1]");
    std::vector<double> energy_before;
    std::vector<int> loads;
    for (unsigned gpu : gpus) energy_before.push_back(gpu_status(gpu).ground_truth_energy_j);
    for (unsigned gpu : gpus) {
      int id = 0;
      check(zeusSimProcessLoadBegin(gpu, o.utilization, o.pid, o.power_weight, &id), "starting the load");
      loads.push_back(id);
    }
    if (is_virtual()) {
      check(zeusSimAdvance(o.seconds), "advancing the virtual clock");
    } else {
      // Ctrl-C ends the burn cleanly; kill -9 is handled by the owner-pid check.
      std::signal(SIGINT, request_stop);
      std::signal(SIGTERM, request_stop);
      double start = 0, now = 0;
      check(zeusSimNow(&start), "reading the clock");
      while (!g_stop && now - start < o.seconds) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        check(zeusSimNow(&now), "reading the clock");
      }
    }
    for (int id : loads) check(zeusSimLoadEnd(id), "ending the load");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      std::printf("gpu %u: %.3f J\n", gpus[i], gpu_status(gpus[i]).ground_truth_energy_j - energy_before[i]);
    }
    return 0;
  });
}

int run_work(const WorkOptions& o) {
  return guarded([&] {
    OpenSimulator open;
    const unsigned gpu = parse_gpus(o.gpu, false).front();
    double elapsed = 0;
    if (!o.trace_csv.empty()) {
      if (o.workload.empty() || o.batch_size <= 0 || !o.epochs) {
        throw CliError("--trace needs --workload dataset/network, --batch-size N and --epochs E");
      }
      if (!(*o.epochs > 0)) throw CliError("--epochs must be > 0");
      int profile = 0;
      check(zeusSimTraceProfileLoad(o.trace_csv.c_str(), o.workload.c_str(), o.batch_size,
                                    o.optimizer.empty() ? nullptr : o.optimizer.c_str(), &profile),
            "loading the trace profile");
      check(zeusSimRunTraceWork(gpu, profile, *o.epochs, &elapsed), "running the work");
    } else {
      if (!o.units) throw CliError("work needs --units N (or --trace ... --epochs E)");
      if (!(*o.units > 0)) throw CliError("--units must be > 0");
      if (!(o.utilization > 0)) throw CliError("--util must be in (0, 1]");
      check(zeusSimRunWork(gpu, *o.units, o.utilization, &elapsed), "running the work");
    }
    std::printf("%.6f\n", elapsed);
    return 0;
  });
}

int run_status(const std::string& format) {
  return guarded([&] {
    OpenSimulator open;
    const unsigned count = gpu_count();
    nlohmann::json gpus = nlohmann::json::array();
    for (unsigned i = 0; i < count; ++i) {
      const zeusSimGpuStatus_t s = gpu_status(i);
      nlohmann::json g = {{"index", i},
                          {"name", s.name},
                          {"uuid", s.uuid},
                          {"true_power_w", s.true_power_w},
                          {"temperature_c", s.temperature_c},
                          {"clock_mhz", s.clock_mhz},
                          {"power_limit_w", s.power_limit_w},
                          {"utilization", s.utilization},
                          {"ground_truth_energy_j", s.ground_truth_energy_j},
                          {"instant_power_reading_w", s.instant_power_reading_w},
                          {"average_power_reading_w", s.average_power_reading_w},
                          {"active_loads", s.active_loads},
                          {"lost", s.lost != 0}};
      g["energy_counter_mj"] = s.energy_counter_supported ? nlohmann::json(s.energy_counter_mj) : nlohmann::json();
      gpus.push_back(g);
    }
    double now = 0;
    check(zeusSimNow(&now), "reading the clock");
    if (format == "json") {
      std::cout << nlohmann::json{{"now_s", now}, {"virtual_clock", is_virtual()}, {"gpus", gpus}}.dump(2) << "\n";
      return 0;
    }
    std::printf("clock: %s, t = %.3f s\n", is_virtual() ? "virtual" : "real", now);
    for (const auto& g : gpus) {
      const std::string counter =
          g["energy_counter_mj"].is_null() ? "n/a" : std::to_string(g["energy_counter_mj"].get<unsigned long long>()) + " mJ";
      std::printf(
          "gpu %u  %s  %s\n"
          "  true power %.2f W  temp %.2f C  clock %.0f MHz  limit %.0f W  util %.0f%%  loads %u%s\n"
          "  ground truth %.3f J  counter %s  instant %.2f W  1s-avg %.2f W\n",
          g["index"].get<unsigned>(), g["name"].get<std::string>().c_str(), g["uuid"].get<std::string>().c_str(),
          g["true_power_w"].get<double>(), g["temperature_c"].get<double>(), g["clock_mhz"].get<double>(),
          g["power_limit_w"].get<double>(), 100 * g["utilization"].get<double>(), g["active_loads"].get<unsigned>(),
          g["lost"].get<bool>() ? "  LOST" : "", g["ground_truth_energy_j"].get<double>(), counter.c_str(),
          g["instant_power_reading_w"].get<double>(), g["average_power_reading_w"].get<double>());
    }
    return 0;
  });
}

int run_advance(double seconds) {
  return guarded([&] {
    OpenSimulator open;
    check(zeusSimAdvance(seconds), "advancing the virtual clock");
    double now = 0;
    check(zeusSimNow(&now), "reading the clock");
    std::printf("%.6f\n", now);
    return 0;
  });
}

int run_fault(const FaultOptions& o) {
  return guarded([&] {
    OpenSimulator open;
    const unsigned gpu = parse_gpus(o.gpu, false).front();
    check(zeusSimInjectFault(gpu, o.name.c_str(), o.value), "injecting the fault");
    return 0;
  });
}

int run_print_default_config() {
  std::fputs(zeusSimDefaultConfigJson(), stdout);
  return 0;
}

int run_process_energy(const ProcessEnergyOptions& o) {
  return guarded([&] {
    OpenSimulator open;
    const unsigned gpu = parse_gpus(o.gpu, false).front();
    double joules = 0;
    check(zeusSimProcessEnergy(gpu, o.pid, &joules), "reading the process's energy");
    if (o.format == "json") {
      std::cout << nlohmann::json{{"gpu", gpu}, {"pid", o.pid}, {"energy_j", joules}}.dump() << "\n";
    } else {
      std::printf("GPU %u process %d: %.6f J\n", gpu, o.pid, joules);
    }
    return 0;
  });
}

int run_sharing(const std::string& gpu_text, const std::string& mode) {
  return guarded([&] {
    OpenSimulator open;
    for (unsigned gpu : parse_gpus(gpu_text, true)) check(zeusSimSetSharing(gpu, mode.c_str()), "setting the sharing");
    return 0;
  });
}

}  // namespace zeus::sim::cli
