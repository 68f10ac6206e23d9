// The GPUs the daemon serves, by physical index. Reads go straight to the
// device (NVML is thread-safe and the counters have their own locks);
// control commands run one at a time per GPU, in arrival order, on that
// GPU's strand of the control executor, so a slow command (an override
// running a vendor tool) never blocks the request threads. Every change is
// read back and entered in the ledger so it can be undone.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

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

    // Queues `command` on its GPU; `done` gets the outcome (on the control
    // executor). `persist` keeps the new value when the client goes away.
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
    Status execute(const ControlCommand& command, ClientId client, bool persist);
    Status apply(const ControlCommand& command, bool* overridden = nullptr);
    Status read_back(const ControlCommand& command);
    void restore(const std::vector<SettingRecord>& records, bool wait, const std::string& why);
    // Writes the ledger file, if there is one.
    Status save_ledger();

    Gpus gpus_;
    std::vector<GpuInfo> info_;
    std::vector<boost::asio::strand<boost::asio::any_io_executor>> strands_;
    OverrideRunner overrides_;
    ControlLedger ledger_;
    std::unique_ptr<LedgerFile> ledger_file_;
};

// "00000000:01:00.0" (NVML) -> "0000:01:00.0" ({domain:04x}:{bus:02x}:{device:02x}.0).
[[nodiscard]] std::string format_pci_address(const std::string& nvml_bus_id);

}  // namespace zeus::zeusd
