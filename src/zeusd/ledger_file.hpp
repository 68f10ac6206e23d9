// The restore ledger on disk, so that a zeusd that crashes (kill -9, a
// segfault, the OOM killer) still gets clients' GPU changes undone: the next
// zeusd reads what this one recorded and did not restore, and puts it back
// before serving. Written atomically (temporary file, fsync, rename) before
// each change is applied. GPUs are named by PCI address in the file, so a
// restore never lands on another GPU after the indices moved.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "zeus/platform/error.hpp"
#include "zeusd/control_ledger.hpp"

namespace zeus::zeusd {

class LedgerFile {
  public:
    // `gpu_pci_addresses[i]` is GPU i's PCI address.
    LedgerFile(std::filesystem::path path, std::vector<std::string> gpu_pci_addresses);

    struct Leftovers {
        std::vector<SettingRecord> records;  // owner = the pid the previous zeusd recorded
        std::vector<std::string> warnings;   // entries that could not be used, and why
    };
    // What a previous zeusd left; nothing when there is no file. A file that
    // cannot be parsed is moved aside (PATH.corrupt) with a warning.
    [[nodiscard]] Leftovers load() const;
    // Writes what `ledger` holds now (the file is removed when it holds nothing).
    [[nodiscard]] Status save(const ControlLedger& ledger);
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
    std::vector<std::string> gpu_pci_addresses_;
    std::mutex mutex_;  // snapshot and write as one step, so a stale snapshot never lands last
};

// "power_limit", "persistence_mode", "gpu_locked_clocks", "mem_locked_clocks".
[[nodiscard]] std::string_view to_string(Setting setting);

}  // namespace zeus::zeusd
