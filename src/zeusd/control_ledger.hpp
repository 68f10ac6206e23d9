// What clients changed, so it can be undone. The first change a client makes
// to a GPU setting records the value before it; when that client's process
// ends (or the daemon stops) the recorded value is put back. A client that
// asks for its change to persist takes the setting off the books. When a
// second client changes a setting the first one owns, the second becomes its
// owner and the original value is kept: what is restored is always the state
// before any client touched it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zeus::zeusd {

enum class Setting { PowerLimit, PersistenceMode, GpuLockedClocks, MemLockedClocks };

// A client is known by its process id (Unix sockets); 0 = unknown (TCP),
// whose changes are undone only when the daemon stops; negative: a process of
// another PID namespace, numbered by zeusd (ClientWatcher::identify).
using ClientId = pid_t;

// "pid 123", or "client -1 (of another PID namespace)", for logs.
[[nodiscard]] std::string describe_client(ClientId client);

struct SettingRecord {
    unsigned gpu = 0;
    Setting setting = Setting::PowerLimit;
    // The value to put back: milliwatts for the power limit, 0/1 for
    // persistence; clocks are put back by resetting them (NVML cannot read
    // locked clocks), so they carry nothing.
    std::optional<std::int64_t> previous;
    ClientId owner = 0;
};

class ControlLedger {
  public:
    // Before a change: keeps the existing record (its baseline) or creates
    // one with `previous`, and makes `owner` its owner. False when the ledger
    // already said exactly that (a client repeating its change), so there is
    // nothing new to put on disk.
    bool record_change(unsigned gpu, Setting setting, std::optional<std::int64_t> previous, ClientId owner);
    // The setting's current state is the one to keep (persisted, or reset to
    // default). False when there was no record of it.
    bool forget(unsigned gpu, Setting setting);
    [[nodiscard]] bool has(unsigned gpu, Setting setting) const;
    // Whether record_change(gpu, setting, _, owner) would find nothing new.
    [[nodiscard]] bool owned_by(unsigned gpu, Setting setting, ClientId owner) const;
    // Removes and returns what `owner` owns / everything.
    [[nodiscard]] std::vector<SettingRecord> take_owned_by(ClientId owner);
    [[nodiscard]] std::vector<SettingRecord> take_all();
    [[nodiscard]] std::vector<SettingRecord> snapshot() const;

  private:
    mutable std::mutex mutex_;
    std::map<std::pair<unsigned, Setting>, SettingRecord> records_;
};

}  // namespace zeus::zeusd
