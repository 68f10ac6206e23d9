// The GPUs the daemon serves, by physical index. Reads go straight to the
// device (NVML is thread-safe and the counters have their own locks);
// control commands run one at a time per GPU, in arrival order, in that
// GPU's lane. A command that can only be quick (an NVML call, no override
// running a vendor tool, no restore-ledger write to fsync) runs on the
// caller's thread when its GPU's lane is idle: a hand-off to another thread
// and back cost more than the command. Anything else, and anything arriving
// while the lane is busy, queues there and runs on the control executor, so
// a slow command never blocks the request threads. Every change is read back
// and entered in the ledger so it can be undone.
#pragma once

#include <filesystem>
#include <functional>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "zeus/device/gpus.hpp"
#include "zeusd/control_command.hpp"
#include "zeusd/control_ledger.hpp"
#include "zeusd/ledger_file.hpp"

namespace zeus::zeusd {

// Runs an operator-configured replacement for a control command; nullopt
// when that command is not overridden.
using OverrideRunner = std::function<std::optional<Status>(const ControlCommand&)>;

struct GpuInfo {
    unsigned id = 0;
    std::string name;
    std::string pci_address;  // "0000:01:00.0", as the original formats it
    bool cumulative_energy_available = false;
};

class GpuFleet {
  public:
    // With `ledger_path`, every change is recorded there before it is applied
    // (see ledger_file.hpp); without it the ledger lives in memory only.
    GpuFleet(Gpus gpus, boost::asio::any_io_executor control_executor, OverrideRunner overrides = {},
             std::optional<std::filesystem::path> ledger_path = std::nullopt);

    [[nodiscard]] std::size_t size() const { return gpus_.size(); }
    [[nodiscard]] const std::vector<GpuInfo>& info() const { return info_; }
    [[nodiscard]] Gpu& gpu(unsigned id) const { return gpus_[id]; }
    [[nodiscard]] const Gpus& gpus() const { return gpus_; }

    // Runs `command` on its GPU after the ones before it; `done` gets the
    // outcome, on the calling thread when the command ran there, otherwise on
    // the control executor. `persist` keeps the new value when the client
    // goes away.
    void submit(const ControlCommand& command, ClientId client, bool persist, std::function<void(Status)> done);

    // Queues putting back what `client` changed (each GPU in its turn).
    void restore_client(ClientId client);
    // Puts back what anyone changed and returns when done (daemon shutdown).
    void restore_all();
    // Puts back what a previous zeusd recorded in the ledger file and did not
    // restore (it crashed), logging each; returns when done. Call before serving.
    void restore_leftovers();
    [[nodiscard]] const ControlLedger& ledger() const { return ledger_; }

  private:
    // One GPU's control commands: `busy` while one runs (inline or on the
    // control executor); the rest wait in `queue`, in arrival order.
    struct Lane {
        std::mutex mutex;
        std::deque<std::function<void()>> queue;
        bool busy = false;
    };
    [[nodiscard]] bool may_run_inline(const ControlCommand& command, ClientId client, bool persist) const;
    // Marks an idle lane with nothing queued busy; false otherwise.
    static bool try_claim(Lane& lane);
    void enqueue(unsigned gpu, std::function<void()> task);
    void run_next(Lane& lane);
    // Runs `task` in `lane`, which the caller made busy, then hands the lane on.
    template <typename Task>
    void run_claimed(Lane& lane, Task&& task);
    // After a task of `lane` ran: the next one goes to the control executor.
    void finish(Lane& lane);
    Status execute(const ControlCommand& command, ClientId client, bool persist);
    Status apply(const ControlCommand& command, bool* overridden = nullptr);
    Status read_back(const ControlCommand& command);
    void restore(const std::vector<SettingRecord>& records, bool wait, const std::string& why);
    // Writes the ledger file, if there is one.
    Status save_ledger();

    Gpus gpus_;
    std::vector<GpuInfo> info_;
    boost::asio::any_io_executor control_executor_;
    std::vector<std::unique_ptr<Lane>> lanes_;
    OverrideRunner overrides_;
    ControlLedger ledger_;
    std::unique_ptr<LedgerFile> ledger_file_;
};

// "00000000:01:00.0" (NVML) -> "0000:01:00.0" ({domain:04x}:{bus:02x}:{device:02x}.0).
[[nodiscard]] std::string format_pci_address(const std::string& nvml_bus_id);

}  // namespace zeus::zeusd
