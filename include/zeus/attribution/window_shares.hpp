// One program's share of each GPU's energy in an energy window: "how much of
// this GPU's energy in this window was mine?" on a GPU shared with other
// processes (notebooks, shared nodes). It runs beside an EnergyMonitor:
//
//   auto shares = zeus::attribution::WindowShares::open(gpus, monitor->gpu_indices(), {}).value();
//   monitor->begin_window("cell").value();
//   shares->begin("cell");
//   ...
//   zeus::Measurement m = monitor->end_window("cell").value();
//   auto per_gpu = shares->end("cell", m).value();  // per_gpu.at(0).share_mj: this process's
//
// Each GPU's window energy (the Measurement's, whatever its edges) is split by
// the attribution engine (engine.hpp) as one interval: the processes seen on
// the GPU during the window, weighted by the driver's per-process SM
// utilization samples accumulated over it, plus the remainder (idle, no
// process). The target's share, the other processes' and the remainder add up
// to the window's GPU energy exactly (whole millijoules).
//
// The driver's process data is read at each edge and, while a window is open,
// every poll period by a thread of this object (the driver keeps few samples,
// and a process may come and go between the edges); on the simulator's
// virtual clock only at the edges.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/attribution/engine.hpp"
#include "zeus/monitor/measurement.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {
class Gpus;
}

namespace zeus::attribution {

// Whose share a window reports.
struct ShareTarget {
    enum class Kind {
        Process,      // one process (this one by default): the one holding the CUDA context in a notebook
        ProcessTree,  // a process and its descendants (workers, a `!python train.py` of a notebook)
        Pids,         // exactly these processes
    };
    Kind kind = Kind::Process;
    // Process, ProcessTree: the root (empty: this process). Pids: the set.
    std::vector<std::uint32_t> pids;

    [[nodiscard]] static ShareTarget this_process();
    [[nodiscard]] static ShareTarget this_process_tree();
    [[nodiscard]] static ShareTarget processes(std::vector<std::uint32_t> pids);
    // "process 12", "process 12 and its descendants", "processes 12, 13".
    [[nodiscard]] std::string describe() const;
};

struct WindowSharesOptions {
    ShareTarget target = ShareTarget::this_process();
    IdlePolicy idle_policy = IdlePolicy::Unattributed;
    // Per GPU index. Without one, the GPU's idle draw is not told apart: all
    // of its energy is split among the processes on it (see WindowShare).
    std::map<unsigned, Milliwatts> idle_power;
    // How often the driver's process data is read while a window is open
    // (0: at the edges only; the driver's samples of a window longer than
    // what it keeps, about 40 s on two processes, are then lost).
    std::chrono::milliseconds poll_period{1000};
    std::filesystem::path proc_root = "/proc";  // where ProcessTree reads parents (a fake tree in tests)
};

// One GPU's window energy, split.
struct WindowShare {
    unsigned gpu = 0;
    // The window's GPU energy (the Measurement's, to the millijoule):
    // share_mj + others_mj() + remainder.energy_mj() exactly.
    std::int64_t gpu_mj = 0;
    std::int64_t share_mj = 0;  // the target's processes' energy
    // How the share was obtained: exclusive (the target was alone on the
    // GPU), utilization, equal_split. nullopt: no process of the target was
    // seen on the GPU (share 0), or the share is unknown (!known).
    std::optional<Method> method;
    // False when the driver gave no process data for the GPU (no NVML
    // process calls, a lost GPU): the share is 0 and the whole energy is in
    // remainder.no_process; `warnings` says why.
    bool known = true;
    std::vector<std::uint32_t> pids;  // the target's processes seen on the GPU, ascending
    std::vector<Share> processes;     // every process's share, ascending pid
    Remainder remainder;
    std::optional<Milliwatts> idle_power;  // as configured; nullopt: the idle draw is in the shares
    std::vector<std::string> warnings;

    [[nodiscard]] std::int64_t others_mj() const;  // the other processes' shares
};

class WindowShares {
  public:
    // `gpus` must outlive the object; `gpu_indices` are CUDA indices (an
    // EnergyMonitor's gpu_indices()). Errors: an index out of range, a root
    // PID that is not a process.
    static Result<std::unique_ptr<WindowShares>> open(const Gpus& gpus, std::vector<unsigned> gpu_indices,
                                                      WindowSharesOptions options);
    virtual ~WindowShares() = default;

    // Starts accounting the window `name` (again, when it is open).
    virtual void begin(std::string_view name) = 0;
    // The split of each GPU in `measured` (the EnergyMonitor's result for the
    // window), by GPU index; closes the window. NotFound when not begun.
    virtual Result<std::map<unsigned, WindowShare>> end(std::string_view name, const Measurement& measured) = 0;
    // Closes the window without a result.
    virtual void cancel(std::string_view name) = 0;
    virtual void reset() = 0;
    // Joins the polling thread (interpreter exit); windows keep working from
    // their edges alone. Idempotent.
    virtual void stop_thread() = 0;
    [[nodiscard]] virtual const ShareTarget& target() const = 0;
};

}  // namespace zeus::attribution
