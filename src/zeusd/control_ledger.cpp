#include "zeusd/control_ledger.hpp"

#include <fmt/format.h>

namespace zeus::zeusd {

std::string describe_client(ClientId client) {
    if (client < 0) return fmt::format("client {} (of another PID namespace)", client);
    return fmt::format("pid {}", client);
}

bool ControlLedger::record_change(unsigned gpu, Setting setting, std::optional<std::int64_t> previous,
                                  ClientId owner) {
    const std::lock_guard lock(mutex_);
    auto [it, inserted] = records_.try_emplace({gpu, setting}, SettingRecord{gpu, setting, previous, owner});
    if (inserted) return true;
    if (it->second.owner == owner) return false;
    it->second.owner = owner;
    return true;
}

bool ControlLedger::forget(unsigned gpu, Setting setting) {
    const std::lock_guard lock(mutex_);
    return records_.erase({gpu, setting}) > 0;
}

bool ControlLedger::has(unsigned gpu, Setting setting) const {
    const std::lock_guard lock(mutex_);
    return records_.contains({gpu, setting});
}

bool ControlLedger::owned_by(unsigned gpu, Setting setting, ClientId owner) const {
    const std::lock_guard lock(mutex_);
    const auto found = records_.find({gpu, setting});
    return found != records_.end() && found->second.owner == owner;
}

std::vector<SettingRecord> ControlLedger::take_owned_by(ClientId owner) {
    const std::lock_guard lock(mutex_);
    std::vector<SettingRecord> taken;
    for (auto it = records_.begin(); it != records_.end();) {
        if (it->second.owner == owner) {
            taken.push_back(it->second);
            it = records_.erase(it);
        } else {
            ++it;
        }
    }
    return taken;
}

std::vector<SettingRecord> ControlLedger::take_all() {
    const std::lock_guard lock(mutex_);
    std::vector<SettingRecord> taken;
    for (auto& [key, record] : records_) taken.push_back(record);
    records_.clear();
    return taken;
}

std::vector<SettingRecord> ControlLedger::snapshot() const {
    const std::lock_guard lock(mutex_);
    std::vector<SettingRecord> out;
    for (const auto& [key, record] : records_) out.push_back(record);
    return out;
}

}  // namespace zeus::zeusd
