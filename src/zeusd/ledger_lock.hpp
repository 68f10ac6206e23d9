// One zeusd per restore ledger. The ledger records what the live daemon's
// clients changed; a second zeusd that read it would "restore" those
// settings under the live daemon and delete its ledger. So a daemon holds
// an exclusive flock on LEDGER.lock from before it touches any GPU until it
// exits, and a second one that finds the lock taken stops at once, naming
// the live one (its pid and listener, which the holder writes into the
// file). The kernel drops the lock when its holder dies, however it dies,
// so a crashed daemon's successor still gets the lock and undoes what the
// crash left.
#pragma once

#include <filesystem>
#include <string>

#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

class LedgerLock {
  public:
    // Takes the lock for `ledger_path` without waiting; `listener` (the
    // socket path or TCP address) is recorded for a second daemon's message.
    [[nodiscard]] static Result<LedgerLock> acquire(const std::filesystem::path& ledger_path,
                                                    const std::string& listener);
    LedgerLock(LedgerLock&& other) noexcept;
    LedgerLock& operator=(LedgerLock&& other) noexcept;
    LedgerLock(const LedgerLock&) = delete;
    LedgerLock& operator=(const LedgerLock&) = delete;
    ~LedgerLock();

    // LEDGER.lock
    [[nodiscard]] static std::filesystem::path lock_path(const std::filesystem::path& ledger_path);

  private:
    explicit LedgerLock(int fd) : fd_(fd) {}
    int fd_ = -1;
};

}  // namespace zeus::zeusd
