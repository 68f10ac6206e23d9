// `zeus demo`: the main job in miniature. Measures the energy a workload
// uses on every visible GPU. On a machine without a usable NVIDIA GPU it says
// so and runs on the GPU simulator, where it also shows the simulator's
// ground-truth energy so the measurement error is visible.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "option_checks.hpp"
#include "cuda_load.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/platform/dynamic_library.hpp"

extern char** environ;

namespace zeus::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct DemoOptions {
    DeviceFlags device;
    double seconds = 3.0;
    double utilization = 0.8;
};

struct GpuWindow {
    Gpu* gpu = nullptr;
    bool counter = false;
    Millijoules start_energy{0};
    Joules integrated{0.0};  // for GPUs without an energy counter
    std::optional<Milliwatts> last_power;
    double truth_start = 0.0;
};

fs::path own_directory() {
    std::error_code ec;
    auto exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path(".") : exe.parent_path();
}

// The simulator's C API, reached through the same already-loaded library so
// the numbers come from the state the NVML calls saw.
class GroundTruth {
  public:
    explicit GroundTruth(const std::string& library) {
        if (auto lib = DynamicLibrary::open(library)) {
            lib_.emplace(std::move(lib).value());
            fn_ = lib_->function<int (*)(unsigned, double*)>("zeusSimGroundTruthEnergy");
        }
    }
    std::optional<double> joules(unsigned physical_index) const {
        double j = 0;
        if (fn_ == nullptr || fn_(physical_index, &j) != 0) return std::nullopt;
        return j;
    }

  private:
    std::optional<DynamicLibrary> lib_;
    int (*fn_)(unsigned, double*) = nullptr;
};

// Starts the workload with its stdout silenced: its own report would only
// interleave with ours.
pid_t spawn(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT: posix_spawn's API
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

// Waits until the GPU's energy counter next refreshes and returns the new
// value. Reading right after a refresh makes the counter current to within
// the poll interval, instead of up to a whole refresh period (~100 ms) stale.
Result<Millijoules> read_at_counter_refresh(const Gpu& gpu) {
    auto first = gpu.total_energy();
    if (!first) return first;
    const auto deadline = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto now = gpu.total_energy();
        if (!now || *now != *first) return now;
    }
    return first;  // a counter that did not move in 1 s (idle, coarse): take it as it is
}

void sample_power(std::vector<GpuWindow>& windows, Clock::duration dt) {
    for (auto& w : windows) {
        if (w.counter) continue;
        auto p = w.gpu->instant_power();
        if (!p) continue;
        if (w.last_power) w.integrated += Joules((quantity_cast<Watts>(*w.last_power + p->power).count() / 2.0) *
                                                 std::chrono::duration<double>(dt).count());
        w.last_power = p->power;
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
    std::optional<Gpus> gpus;
    if (!options.simulate) {
        gpus = Gpus::open(options);
        if (gpus->empty()) {
            std::cout << "No usable NVIDIA GPU here: " << gpus->status().error().message
                      << "\nRunning the demo on the Zeus GPU simulator instead (simulated GPUs, not real "
                         "hardware).\n\n";
            options.simulate = true;
        } else {
            std::cout << "Measuring real GPUs through " << gpus->backend_info().library_path << ".\n";
        }
    }

    std::optional<fs::path> scratch;
    if (options.simulate) {
        // Workload and measurement are separate processes: they meet in the
        // simulator's shared state file.
        const char* state = std::getenv("ZEUS_SIM_STATE");  // NOLINT(concurrency-mt-unsafe)
        if (state == nullptr || *state == '\0') {
            std::string dir_template = (fs::temp_directory_path() / "zeus-demo-XXXXXX").string();
            if (mkdtemp(dir_template.data()) == nullptr) {
                std::cerr << "zeus: cannot create a temporary directory for the simulator state\n";
                return 1;
            }
            scratch = fs::path(dir_template);
            setenv("ZEUS_SIM_STATE", (*scratch / "sim.state").c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
        }
        gpus = Gpus::open(options);
        if (gpus->empty()) {
            std::cerr << "zeus: the simulator has no usable GPU: " << gpus->status().error().describe() << "\n";
            return 1;
        }
    }

    std::vector<GpuWindow> windows;
    for (const auto& gpu : *gpus) {
        if (!gpu->available()) {
            std::cout << "GPU " << gpu->identity().index << " skipped: " << gpu->status().error().describe() << "\n";
            continue;
        }
        windows.push_back(GpuWindow{gpu.get(), gpu->capabilities().energy_counter.supported, Millijoules(0),
                                    Joules(0.0), std::nullopt, 0.0});
    }

    std::optional<GroundTruth> truth;
    std::vector<std::string> workload;
    if (options.simulate) {
        truth.emplace(gpus->backend_info().library_path);
        workload = {(own_directory() / "zeus-sim").string(), "burn",   "--gpu", "all", "--seconds",
                    fmt::format("{}", opts.seconds),         "--util", fmt::format("{}", opts.utilization)};
        std::cout << "Workload: " << fmt::format("{}", fmt::join(workload, " ")) << "\n";
    } else {
        std::cout << fmt::format("Workload: CUDA memset load for {} s on every visible GPU\n", opts.seconds);
    }

    for (auto& w : windows) {
        if (w.counter) {
            auto e = read_at_counter_refresh(*w.gpu);
            if (!e) {
                std::cerr << "zeus: " << e.error().describe() << "\n";
                return 1;
            }
            w.start_energy = *e;
        }
        if (truth) w.truth_start = truth->joules(w.gpu->identity().physical_index).value_or(0.0);
    }
    std::cout.flush();
    const auto start = Clock::now();
    pid_t child = -1;
    std::optional<std::thread> cuda_load;
    Status cuda_status;
    if (!options.simulate) {
        std::vector<unsigned> ordinals;
        for (const auto& w : windows) ordinals.push_back(w.gpu->identity().index);
        cuda_load.emplace([&cuda_status, ordinals, seconds = opts.seconds] {
            cuda_status = run_cuda_memset_load(ordinals, std::chrono::duration<double>(seconds));
        });
    }
    if (!workload.empty()) {
        child = spawn(workload);
        if (child < 0) {
            std::cerr << "zeus: cannot start " << workload.front() << " (build the zeus-sim target)\n";
            return 1;
        }
    }
    const auto period = std::chrono::milliseconds(50);
    int child_status = 0;
    auto last = Clock::now();
    while (true) {
        std::this_thread::sleep_for(period);
        const auto now = Clock::now();
        sample_power(windows, now - last);
        last = now;
        if (child > 0) {
            if (waitpid(child, &child_status, WNOHANG) == child) break;
        } else if (now - start >= std::chrono::duration<double>(opts.seconds)) {
            break;
        }
    }
    if (cuda_load) {
        cuda_load->join();
        if (!cuda_status) {
            std::cout << "No GPU load could be started (" << cuda_status.error().describe()
                      << "); the numbers below are the GPUs' energy while idle.\n";
        }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (child > 0 && (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0)) {
        std::cerr << "zeus: the workload failed (status " << child_status << ")\n";
        return 1;
    }

    std::cout << fmt::format("\n{:<4} {:<26} {:>9} {:>11} {:>10}  {:<17}", "GPU", "Name", "Time (s)", "Energy (J)",
                             "Power (W)", "Source");
    if (truth) std::cout << fmt::format(" {:>12} {:>8}", "Truth (J)", "Error");
    std::cout << "\n";
    for (auto& w : windows) {
        Joules energy{0.0};
        std::string source;
        if (w.counter) {
            auto e = read_at_counter_refresh(*w.gpu);
            if (!e) {
                std::cerr << "zeus: " << e.error().describe() << "\n";
                return 1;
            }
            energy = quantity_cast<Joules>(*e - w.start_energy);
            source = "energy counter";
        } else {
            energy = w.integrated;
            source = "integrated power";
        }
        std::cout << fmt::format("{:<4} {:<26} {:>9.3f} {:>11.2f} {:>10.1f}  {:<17}", w.gpu->identity().index,
                                 w.gpu->identity().name, elapsed, energy.count(), energy.count() / elapsed, source);
        if (truth) {
            if (auto end = truth->joules(w.gpu->identity().physical_index)) {
                const double t = *end - w.truth_start;
                std::cout << fmt::format(" {:>12.2f} {:>7.2f}%", t, t > 0 ? 100.0 * (energy.count() - t) / t : 0.0);
            }
        }
        std::cout << "\n";
    }
    if (options.simulate) {
        std::cout << "\nThese GPUs are simulated. The error column compares the measurement with the energy the "
                     "simulator integrated; counters refresh every ~100 ms, as on real boards.\n";
    }
    gpus.reset();
    if (scratch) {
        std::error_code ec;
        fs::remove_all(*scratch, ec);
    }
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
