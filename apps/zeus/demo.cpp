// `zeus demo`: the main job in miniature. Measures the energy a workload
// uses on every visible GPU. On a machine without a usable NVIDIA GPU it says
// so and runs on the GPU simulator, where it also shows the simulator's
// ground-truth energy so the measurement error is visible.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "commands.hpp"
#include "cuda_load.hpp"
#include "option_checks.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/simulation/scratch_directory.hpp"
#include "zeus/simulation/simulator_api.hpp"

namespace zeus::cli {
namespace {

namespace fs = std::filesystem;

struct DemoOptions {
    DeviceFlags device;
    double seconds = 3.0;
    double utilization = 0.8;
};

fs::path own_directory() {
    std::error_code ec;
    auto exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path(".") : exe.parent_path();
}

// The simulator's ground-truth energy of each GPU (by physical index), from
// the already-loaded library, so the numbers come from the state the NVML
// calls saw. Empty for real GPUs.
std::map<unsigned, double> ground_truth(const std::optional<simulation::SimulatorApi>& simulator, const Gpus& gpus) {
    std::map<unsigned, double> joules;
    if (!simulator) return joules;
    for (const auto& gpu : gpus) {
        double j = 0;
        const unsigned physical = gpu->identity().physical_index;
        if (simulator->ground_truth_energy(physical, &j) == 0) joules[physical] = j;
    }
    return joules;
}

// The GPUs the demo measures, or the error that stops it.
Result<Gpus> open_gpus(GpuOptions& options, std::optional<simulation::ScratchDirectory>& scratch) {
    if (!options.simulate) {
        auto gpus = Gpus::open(options);
        if (!gpus.empty()) {
            std::cout << "Measuring real GPUs through " << gpus.backend_info().library_path << ".\n";
            return gpus;
        }
        std::cout << "No usable NVIDIA GPU here: " << gpus.status().error().message
                  << "\nRunning the demo on the Zeus GPU simulator instead (simulated GPUs, not real "
                     "hardware).\n\n";
        options.simulate = true;
    }
    // Workload and measurement are separate processes: they meet in the
    // simulator's shared state file.
    const char* state = std::getenv("ZEUS_SIM_STATE");  // NOLINT(concurrency-mt-unsafe): before any thread
    if (state == nullptr || *state == '\0') {
        auto created = simulation::ScratchDirectory::create("zeus-demo");
        if (!created) return created.error();
        scratch.emplace(std::move(created).value());
        ::setenv("ZEUS_SIM_STATE", (scratch->path() / "sim.state").c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    }
    auto gpus = Gpus::open(options);
    if (gpus.empty()) {
        Error error = gpus.status().error();
        error.message = "the simulator has no usable GPU: " + error.message;
        return error;
    }
    return gpus;
}

// Runs the workload to its end: the simulator's burn (its report silenced:
// it would only interleave with ours) or a CUDA load on every measured GPU.
Status run_workload(const DemoOptions& opts, const std::vector<std::string>& simulated_workload,
                    const std::vector<unsigned>& ordinals) {
    if (simulated_workload.empty()) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(opts.seconds);
        const Status load = run_cuda_memset_load(ordinals, std::chrono::duration<double>(opts.seconds));
        if (!load) {
            std::this_thread::sleep_until(end);
            std::cout << "No GPU load could be started (" << load.error().describe()
                      << "); the numbers below are the GPUs' energy while idle.\n";
        }
        return {};
    }
    auto child = spawn_command(simulated_workload, ChildStdout::kDiscarded);
    if (!child) {
        return Error{ErrorCode::NotFound, fmt::format("cannot start {}", simulated_workload.front()),
                     "build the zeus-sim target"};
    }
    int child_status = 0;
    while (::waitpid(*child, &child_status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0) {
        return Error{ErrorCode::Unknown, fmt::format("the workload failed (status {})", child_status), ""};
    }
    return {};
}

// The available GPUs' indices; the others are reported as skipped.
std::vector<unsigned> usable_gpus(const Gpus& gpus) {
    std::vector<unsigned> indices;
    for (const auto& gpu : gpus) {
        if (!gpu->available()) {
            std::cout << "GPU " << gpu->identity().index << " skipped: " << gpu->status().error().describe() << "\n";
            continue;
        }
        indices.push_back(gpu->identity().index);
    }
    return indices;
}

// Prints what the demo runs; the simulator's burn command, or empty for the CUDA load.
std::vector<std::string> announce_workload(const DemoOptions& opts, bool simulate) {
    if (!simulate) {
        std::cout << fmt::format("Workload: CUDA memset load for {} s on every visible GPU\n", opts.seconds);
        return {};
    }
    std::vector<std::string> workload = {(own_directory() / "zeus-sim").string(),
                                         "burn",
                                         "--gpu",
                                         "all",
                                         "--seconds",
                                         fmt::format("{}", opts.seconds),
                                         "--util",
                                         fmt::format("{}", opts.utilization)};
    std::cout << "Workload: " << fmt::format("{}", fmt::join(workload, " ")) << "\n";
    return workload;
}

// Each edge waits for the energy counters' next refreshes: the counter is
// then current, instead of up to a refresh period (~100 ms) stale. GPUs
// without a counter get their power integrated.
Result<std::unique_ptr<EnergyMonitor>> open_monitor(const Gpus& gpus, const std::vector<unsigned>& indices) {
    EnergyMonitorOptions monitor_options;
    monitor_options.gpu_indices = indices;
    monitor_options.wait_for_counter_refresh = true;
    return EnergyMonitor::open(gpus, nullptr, nullptr, monitor_options);
}

struct DemoMeasurement {
    Measurement measured;
    // The simulator's ground truth at the window's edges (empty for real GPUs).
    std::map<unsigned, double> truth_start, truth_end;
};

Result<DemoMeasurement> measure_workload(EnergyMonitor& monitor, const DemoOptions& opts,
                                         const std::vector<std::string>& workload, const std::vector<unsigned>& indices,
                                         const std::optional<simulation::SimulatorApi>& simulator, const Gpus& gpus) {
    if (auto begun = monitor.begin_window("demo", false); !begun) return begun.error();
    DemoMeasurement out;
    out.truth_start = ground_truth(simulator, gpus);
    std::cout.flush();
    if (auto ran = run_workload(opts, workload, indices); !ran) return ran.error();
    auto measured = monitor.end_window("demo", false);
    if (!measured) return measured.error();
    out.truth_end = ground_truth(simulator, gpus);
    out.measured = std::move(measured).value();
    return out;
}

// One row per GPU; with the simulator, its ground truth and the measurement's error against it.
void print_results(const DemoMeasurement& m, const Gpus& gpus, const std::vector<unsigned>& indices, bool with_truth) {
    const double elapsed = m.measured.time.count();
    std::cout << fmt::format("\n{:<4} {:<26} {:>9} {:>11} {:>10}  {:<17}", "GPU", "Name", "Time (s)", "Energy (J)",
                             "Power (W)", "Source");
    if (with_truth) std::cout << fmt::format(" {:>12} {:>8}", "Truth (J)", "Error");
    std::cout << "\n";
    for (const unsigned index : indices) {
        const Gpu& gpu = gpus[index];
        const EnergyValue& value = m.measured.gpu_energy.at(index);
        const double joules = value.energy.count();
        const char* source = value.source == EnergySource::HardwareCounter ? "energy counter" : "integrated power";
        std::cout << fmt::format("{:<4} {:<26} {:>9.3f} {:>11.2f} {:>10.1f}  {:<17}", index, gpu.identity().name,
                                 elapsed, joules, joules / elapsed, source);
        const unsigned physical = gpu.identity().physical_index;
        if (m.truth_start.contains(physical) && m.truth_end.contains(physical)) {
            const double t = m.truth_end.at(physical) - m.truth_start.at(physical);
            std::cout << fmt::format(" {:>12.2f} {:>7.2f}%", t, t > 0 ? 100.0 * (joules - t) / t : 0.0);
        }
        std::cout << "\n";
    }
}

int run_demo(const DemoOptions& opts) {
    auto env_options = GpuOptions::from_environment();
    if (!env_options) {
        std::cerr << "zeus: " << env_options.error().describe() << "\n";
        return 2;
    }
    GpuOptions options = env_options.value();
    options.simulate = options.simulate || opts.device.simulate;
    std::optional<simulation::ScratchDirectory> scratch;
    auto opened = open_gpus(options, scratch);
    if (!opened) {
        std::cerr << "zeus: " << opened.error().describe() << "\n";
        return 1;
    }
    std::optional<Gpus> gpus(std::move(opened).value());
    const std::vector<unsigned> indices = usable_gpus(*gpus);

    std::optional<simulation::SimulatorApi> simulator;
    if (options.simulate) {
        if (auto api = simulation::SimulatorApi::open(*gpus)) simulator.emplace(std::move(api).value());
    }
    const std::vector<std::string> workload = announce_workload(opts, options.simulate);

    auto opened_monitor = open_monitor(*gpus, indices);
    if (!opened_monitor) {
        std::cerr << "zeus: " << opened_monitor.error().describe() << "\n";
        return 1;
    }
    std::unique_ptr<EnergyMonitor> monitor = std::move(opened_monitor).value();
    auto measured = measure_workload(*monitor, opts, workload, indices, simulator, *gpus);
    if (!measured) {
        std::cerr << "zeus: " << measured.error().describe() << "\n";
        return 1;
    }
    print_results(*measured, *gpus, indices, simulator.has_value());
    if (options.simulate) {
        std::cout << "\nThese GPUs are simulated. The error column compares the measurement with the energy the "
                     "simulator integrated; counters refresh every ~100 ms, as on real boards.\n";
    }
    monitor.reset();
    gpus.reset();
    return 0;
}

}  // namespace

Command add_demo(CLI::App& parent) {
    auto* cmd = parent.add_subcommand("demo", "Measure the energy of a demo workload on every visible GPU");
    auto opts = std::make_shared<DemoOptions>();
    add_device_flags(*cmd, opts->device);
    cmd->add_option("--seconds", opts->seconds, "How long the workload runs")->check(finite_number(0.1, 3600.0, "s"))
        ->capture_default_str();
    cmd->add_option("--util", opts->utilization, "Simulated workload's GPU utilization")
        ->check(positive_number(1.0, ""))
        ->capture_default_str();
    return [opts]() { return run_demo(*opts); };
}

}  // namespace zeus::cli
