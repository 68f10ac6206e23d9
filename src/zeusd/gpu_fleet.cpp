#include "zeusd/gpu_fleet.hpp"

#include <cstdio>
#include <future>

#include <boost/asio/post.hpp>
#include <fmt/format.h>

#include "zeusd/log.hpp"

namespace zeus::zeusd {
namespace {

std::optional<Setting> setting_of(GpuCommand kind) {
    switch (kind) {
        case GpuCommand::SetPowerLimit: return Setting::PowerLimit;
        case GpuCommand::SetPersistenceMode: return Setting::PersistenceMode;
        case GpuCommand::SetGpuLockedClocks: return Setting::GpuLockedClocks;
        case GpuCommand::SetMemLockedClocks: return Setting::MemLockedClocks;
        default: return std::nullopt;
    }
}

}  // namespace

std::string format_pci_address(const std::string& nvml_bus_id) {
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    if (std::sscanf(nvml_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) >= 3) {
        return fmt::format("{:04x}:{:02x}:{:02x}.0", domain, bus, device);
    }
    return nvml_bus_id;
}

GpuFleet::GpuFleet(Gpus gpus, boost::asio::any_io_executor control_executor, OverrideRunner overrides,
                   std::optional<std::filesystem::path> ledger_path)
    : gpus_(std::move(gpus)), control_executor_(std::move(control_executor)), overrides_(std::move(overrides)) {
    std::vector<std::string> pci_addresses;
    for (unsigned id = 0; id < gpus_.size(); ++id) {
        const Gpu& gpu = gpus_[id];
        info_.push_back(GpuInfo{id, gpu.identity().name, format_pci_address(gpu.identity().pci_bus_id),
                                gpu.total_energy().ok()});
        pci_addresses.push_back(info_.back().pci_address);
        lanes_.push_back(std::make_unique<Lane>());
    }
    if (ledger_path) ledger_file_ = std::make_unique<LedgerFile>(*ledger_path, std::move(pci_addresses));
}

Status GpuFleet::save_ledger() { return ledger_file_ ? ledger_file_->save(ledger_) : Status{}; }

template <typename Task>
void GpuFleet::run_claimed(Lane& lane, Task&& task) {
    // Whatever happens, the lane is handed on.
    struct Release {
        GpuFleet* fleet;
        Lane* lane;
        ~Release() { fleet->finish(*lane); }
    } release{this, &lane};
    std::forward<Task>(task)();
}

void GpuFleet::submit(const ControlCommand& command, ClientId client, bool persist,
                      std::function<void(Status)> done) {
    Lane& lane = *lanes_.at(command.gpu);
    if (may_run_inline(command, client, persist) && try_claim(lane)) {
        run_claimed(lane, [&] { done(execute(command, client, persist)); });
        return;
    }
    enqueue(command.gpu, [this, command, client, persist, done = std::move(done)] {
        done(execute(command, client, persist));
    });
}

bool GpuFleet::may_run_inline(const ControlCommand& command, ClientId client, bool persist) const {
    // An override may run a vendor tool for as long as it takes.
    if (overrides_) return false;
    if (!ledger_file_) return true;
    // Only when the ledger file stays as it is: its write ends in fsyncs. A
    // client watcher taking records away in between costs one inline write.
    if (const auto setting = setting_of(command.kind)) {
        return persist ? !ledger_.has(command.gpu, *setting) : ledger_.owned_by(command.gpu, *setting, client);
    }
    const bool gpu_clocks =
        command.kind == GpuCommand::ResetGpuLockedClocks || command.kind == GpuCommand::ResetLockedClocks;
    const bool memory_clocks =
        command.kind == GpuCommand::ResetMemLockedClocks || command.kind == GpuCommand::ResetLockedClocks;
    return !(gpu_clocks && ledger_.has(command.gpu, Setting::GpuLockedClocks)) &&
           !(memory_clocks && ledger_.has(command.gpu, Setting::MemLockedClocks));
}

bool GpuFleet::try_claim(Lane& lane) {
    const std::lock_guard lock(lane.mutex);
    if (lane.busy || !lane.queue.empty()) return false;
    lane.busy = true;
    return true;
}

void GpuFleet::enqueue(unsigned gpu, std::function<void()> task) {
    Lane& lane = *lanes_.at(gpu);
    {
        const std::lock_guard lock(lane.mutex);
        lane.queue.push_back(std::move(task));
        if (lane.busy) return;  // whoever runs the lane now gets to it
        lane.busy = true;
    }
    boost::asio::post(control_executor_, [this, &lane] { run_next(lane); });
}

void GpuFleet::run_next(Lane& lane) {
    std::function<void()> task;
    {
        const std::lock_guard lock(lane.mutex);
        task = std::move(lane.queue.front());
        lane.queue.pop_front();
    }
    run_claimed(lane, task);
}

void GpuFleet::finish(Lane& lane) {
    {
        const std::lock_guard lock(lane.mutex);
        if (lane.queue.empty()) {
            lane.busy = false;
            return;
        }
    }
    // One command per turn, so the other GPUs' lanes share the executor's threads.
    boost::asio::post(control_executor_, [this, &lane] { run_next(lane); });
}

Status GpuFleet::execute(const ControlCommand& command, ClientId client, bool persist) {
    Gpu& device = gpus_[command.gpu];
    const auto setting = setting_of(command.kind);
    // The baseline is read before the first change so it can be put back.
    if (setting && !persist && !ledger_.has(command.gpu, *setting)) {
        std::optional<std::int64_t> previous;
        if (*setting == Setting::PowerLimit) {
            auto limit = device.power_limit();
            if (!limit) return limit.error();
            previous = limit.value().count();
        } else if (*setting == Setting::PersistenceMode) {
            auto mode = device.persistence_mode();
            if (mode) previous = mode.value() ? 1 : 0;
        }
        // On disk before the GPU changes: a crash from here on still gets it undone.
        ledger_.record_change(command.gpu, *setting, previous, client);
        if (Status saved = save_ledger(); !saved) {
            ledger_.forget(command.gpu, *setting);
            return saved;
        }
        bool overridden = false;
        Status applied = apply(command, &overridden);
        if (!applied) {
            ledger_.forget(command.gpu, *setting);
            (void)save_ledger();
            return applied;
        }
        return overridden ? Status{} : read_back(command);
    }
    // A client repeating its own change leaves the ledger as it is: no write
    // (and no two fsyncs) per request.
    if (setting && !persist && ledger_.record_change(command.gpu, *setting, std::nullopt, client)) {
        if (Status saved = save_ledger(); !saved) return saved;
    }
    bool overridden = false;
    Status applied = apply(command, &overridden);
    if (!applied) return applied;
    bool forgot = false;
    if (setting && persist) forgot = ledger_.forget(command.gpu, *setting);
    // A reset returns the clocks to their defaults, which is what a restore would do.
    if (command.kind == GpuCommand::ResetGpuLockedClocks || command.kind == GpuCommand::ResetLockedClocks) {
        forgot = ledger_.forget(command.gpu, Setting::GpuLockedClocks) || forgot;
    }
    if (command.kind == GpuCommand::ResetMemLockedClocks || command.kind == GpuCommand::ResetLockedClocks) {
        forgot = ledger_.forget(command.gpu, Setting::MemLockedClocks) || forgot;
    }
    if (forgot) {
        if (Status saved = save_ledger(); !saved) log::warn("{}", saved.error().describe());
    }
    // An operator's override may act on something NVML does not see.
    return overridden ? Status{} : read_back(command);
}

Status GpuFleet::apply(const ControlCommand& command, bool* overridden) {
    if (overrides_) {
        if (auto result = overrides_(command)) {
            if (overridden != nullptr) *overridden = true;
            return *result;
        }
    }
    Gpu& device = gpus_[command.gpu];
    switch (command.kind) {
        case GpuCommand::SetPowerLimit: return device.set_power_limit(Milliwatts(command.power_limit_mw));
        case GpuCommand::SetPersistenceMode: return device.set_persistence_mode(command.enabled);
        case GpuCommand::SetGpuLockedClocks:
            return device.set_gpu_locked_clocks(Megahertz(command.min_clock_mhz), Megahertz(command.max_clock_mhz));
        case GpuCommand::ResetGpuLockedClocks: return device.reset_gpu_locked_clocks();
        case GpuCommand::SetMemLockedClocks:
            return device.set_memory_locked_clocks(Megahertz(command.min_clock_mhz),
                                                   Megahertz(command.max_clock_mhz));
        case GpuCommand::ResetMemLockedClocks: return device.reset_memory_locked_clocks();
        case GpuCommand::ResetLockedClocks: return device.reset_locked_clocks();
    }
    return Error{ErrorCode::InvalidArgument, "unknown control command", ""};
}

Status GpuFleet::read_back(const ControlCommand& command) {
    Gpu& device = gpus_[command.gpu];
    if (command.kind == GpuCommand::SetPowerLimit) {
        auto limit = device.power_limit();
        if (limit && limit.value().count() != command.power_limit_mw) {
            return Error{ErrorCode::Unknown,
                         fmt::format("GPU {} reports a power limit of {} mW after it was set to {} mW", command.gpu,
                                     limit.value().count(), command.power_limit_mw),
                         "another process may be changing it, or the driver clamped the value"};
        }
    } else if (command.kind == GpuCommand::SetPersistenceMode) {
        auto mode = device.persistence_mode();
        if (mode && mode.value() != command.enabled) {
            return Error{ErrorCode::Unknown,
                         fmt::format("GPU {} reports persistence mode {} after it was set to {}", command.gpu,
                                     mode.value() ? "enabled" : "disabled", command.enabled ? "enabled" : "disabled"),
                         ""};
        }
    }
    return {};
}

void GpuFleet::restore(const std::vector<SettingRecord>& records, bool wait, const std::string& why) {
    std::vector<std::future<void>> pending;
    for (const auto& record : records) {
        auto task = std::make_shared<std::packaged_task<void()>>([this, record, why] {
            ControlCommand command;
            command.gpu = record.gpu;
            switch (record.setting) {
                case Setting::PowerLimit:
                    if (!record.previous) return;
                    command.kind = GpuCommand::SetPowerLimit;
                    command.power_limit_mw = static_cast<std::uint32_t>(*record.previous);
                    break;
                case Setting::PersistenceMode:
                    if (!record.previous) return;
                    command.kind = GpuCommand::SetPersistenceMode;
                    command.enabled = *record.previous != 0;
                    break;
                case Setting::GpuLockedClocks: command.kind = GpuCommand::ResetGpuLockedClocks; break;
                case Setting::MemLockedClocks: command.kind = GpuCommand::ResetMemLockedClocks; break;
            }
            const Status status = apply(command);
            if (status) {
                log::info("restored GPU {} with {} ({})", record.gpu, to_string(command.kind),
                          why.empty() ? fmt::format("{} is gone", describe_client(record.owner)) : why);
            } else {
                log::error("could not restore GPU {} with {}: {}", record.gpu, to_string(command.kind),
                           status.error().describe());
            }
            // The records were taken out of the ledger; the file follows once they are back.
            if (Status saved = save_ledger(); !saved) log::warn("{}", saved.error().describe());
        });
        pending.push_back(task->get_future());
        enqueue(record.gpu, [task] { (*task)(); });
    }
    if (!wait) return;
    for (auto& future : pending) future.wait();
}

void GpuFleet::restore_client(ClientId client) { restore(ledger_.take_owned_by(client), false, ""); }

void GpuFleet::restore_all() { restore(ledger_.take_all(), true, "zeusd is stopping"); }

void GpuFleet::restore_leftovers() {
    if (!ledger_file_) return;
    auto leftovers = ledger_file_->load();
    for (const auto& warning : leftovers.warnings) log::warn("{}", warning);
    if (leftovers.records.empty()) {
        if (!leftovers.warnings.empty()) (void)save_ledger();
        return;
    }
    log::warn("{} records {} GPU setting(s) that a previous zeusd changed and did not put back (it did not stop "
              "cleanly); restoring them now",
              ledger_file_->path().string(), leftovers.records.size());
    for (const auto& record : leftovers.records) {
        log::info("restoring {} of GPU {} to {} (changed by client pid {} of a previous zeusd)", to_string(record.setting),
                  record.gpu, record.previous ? std::to_string(*record.previous) : std::string("its default"),
                  record.owner);
        ledger_.record_change(record.gpu, record.setting, record.previous, record.owner);
    }
    restore(ledger_.take_all(), true, "left changed by a previous zeusd");
}

}  // namespace zeus::zeusd
