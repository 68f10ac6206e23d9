#include "device/zeusd/zeusd_cpu.hpp"

#include <fmt/format.h>

namespace zeus::zeusd_backend {
namespace {

Cpus empty_set(Error why, std::string root) { return Cpus({}, Status(std::move(why)), {}, std::move(root), nullptr); }

// range 0: the daemon's totals never wrap, so a decrease is a daemon
// restart (a reset), not a wrap to be added back.
std::shared_ptr<AccumulatedCounter> daemon_counter(std::string name, Watts max_power) {
    CounterSpec spec{std::move(name), 0, 1e-6, max_power};
    // Values are fed by record(), with a ticket drawn before the request
    // (one for both counters); read() is never called.
    return std::make_shared<AccumulatedCounter>(std::move(spec), []() -> Result<std::uint64_t> {
        return Error{ErrorCode::InvalidState, "zeusd counters are fed by their CPU", "", 0};
    });
}

std::uint64_t raw(Microjoules uj) { return static_cast<std::uint64_t>(uj.count()); }

}  // namespace

ZeusdCpu::ZeusdCpu(CpuIdentity identity, std::shared_ptr<ZeusdClient> client, const CpuOptions& options,
                   const ZeusdCpuEnergy& first)
    : identity_(std::move(identity)),
      client_(std::move(client)),
      package_(daemon_counter(fmt::format("zeusd CPU {} package ({})", identity_.zone_index, identity_.path),
                              options.max_package_power)),
      ceiling_{options.max_package_power, options.max_dram_power} {
    // The baselines, read before anyone else could read these counters.
    package_->record(raw(first.cpu.value_or(Microjoules(0))), package_->ticket());
    if (first.dram) {
        dram_ = daemon_counter(fmt::format("zeusd CPU {} DRAM ({})", identity_.zone_index, identity_.path),
                               options.max_dram_power);
        dram_->record(raw(*first.dram), dram_->ticket());
    }
}

Status ZeusdCpu::dram_status() const {
    if (dram_) return {};
    return Error{ErrorCode::NotSupported,
                 fmt::format("CPU {} ({}): zeusd reports no DRAM energy for this package", identity_.index,
                             identity_.path),
                 "the daemon's host exposes no RAPL DRAM zone for it (usual on client CPUs and many AMD parts); only "
                 "the package is measured",
                 0};
}

Error ZeusdCpu::dram_vanished() const {
    return Error{ErrorCode::InvalidState,
                 fmt::format("CPU {} ({}): zeusd stopped reporting DRAM energy it reported before", identity_.index,
                             identity_.path),
                 "the daemon may have restarted on a different host or configuration; reopen the CPUs", 0};
}

Result<ZeusdCpuEnergy> ZeusdCpu::fetch(bool cpu, bool dram) const {
    auto energy = client_->cpu_energy({identity_.zone_index}, cpu, dram);
    if (!energy) return energy.error();
    return energy->at(identity_.zone_index);  // cpu_energy() guarantees the entry
}

Result<CpuEnergy> ZeusdCpu::total_energy() const {
    // Drawn before the request: concurrent requests may be answered, and
    // recorded, in any order.
    const auto package_ticket = package_->ticket();
    const auto dram_ticket = dram_ ? std::optional(dram_->ticket()) : std::nullopt;
    auto energy = fetch(true, dram_ != nullptr);
    if (!energy) return energy.error();
    if (dram_ && !energy->dram) return dram_vanished();
    CpuEnergy out;
    out.package = package_->record(raw(*energy->cpu), package_ticket);
    out.package_stats = package_->stats();
    if (dram_) {
        out.dram = dram_->record(raw(*energy->dram), *dram_ticket);
        out.dram_stats = dram_->stats();
    }
    return out;
}

Result<Joules> ZeusdCpu::package_energy() const {
    const auto ticket = package_->ticket();
    auto energy = fetch(true, false);
    if (!energy) return energy.error();
    return package_->record(raw(*energy->cpu), ticket);
}

Result<Joules> ZeusdCpu::dram_energy() const {
    if (auto s = dram_status(); !s) return s.error();
    const auto ticket = dram_->ticket();
    auto energy = fetch(false, true);
    if (!energy) return energy.error();
    if (!energy->dram) return dram_vanished();
    return dram_->record(raw(*energy->dram), ticket);
}

Result<CpuEnergy> ZeusdCpu::accumulated() const {
    CpuEnergy energy;
    energy.package = package_->accumulator().total();
    energy.package_stats = package_->stats();
    if (dram_) {
        energy.dram = dram_->accumulator().total();
        energy.dram_stats = dram_->stats();
    }
    return energy;
}

Cpus open_cpus(const CpuOptions& options) {
    const ZeusdConfig& config = *options.zeusd;
    const std::string where = "zeusd " + config.endpoint();
    auto connected = ZeusdClient::connect(config);
    if (!connected) return empty_set(connected.error(), where);
    std::shared_ptr<ZeusdClient> client = *connected;
    if (auto s = client->require(ZeusdRequirements{.read_cpu = true}); !s) {
        Error e = s.error();
        e.message = "CPU energy is read through zeusd here (" + config.as_environment() + "), and " + e.message;
        return empty_set(std::move(e), where);
    }
    if (client->discovery().cpus.empty()) {
        return empty_set(Error{ErrorCode::NotFound,
                               fmt::format("zeusd at {} lists no CPU package: it found no RAPL zone on its host",
                                           config.endpoint()),
                               "check the daemon's log; RAPL needs /sys/class/powercap/intel-rapl on the host (in a "
                               "container, mount the host's sysfs at /zeus_sys)",
                               0},
                         where);
    }
    // One request sets every package's baseline.
    auto first = client->cpu_energy({}, true, true);
    if (!first) return empty_set(first.error(), where);

    std::vector<std::unique_ptr<Cpu>> cpus;
    std::vector<std::string> warnings;
    for (const auto& info : client->discovery().cpus) {
        auto it = first->find(info.id);
        if (it == first->end()) {
            warnings.push_back(fmt::format("zeusd at {} lists CPU {} in /discover but gave no energy for it; not "
                                           "measured",
                                           config.endpoint(), info.id));
            continue;
        }
        if (info.dram_available && !it->second.dram) {
            warnings.push_back(fmt::format("zeusd at {} lists DRAM for CPU {} but gave no DRAM energy; only the "
                                           "package is measured",
                                           config.endpoint(), info.id));
        }
        CpuIdentity id;
        id.index = static_cast<unsigned>(cpus.size());
        id.zone_index = info.id;  // the daemon numbers packages in intel-rapl:N order
        id.zone_name = fmt::format("package-{}", info.id);
        id.path = where;
        cpus.push_back(std::make_unique<ZeusdCpu>(std::move(id), client, options, it->second));
    }
    return Cpus(std::move(cpus), Status(), std::move(warnings), where, nullptr);
}

}  // namespace zeus::zeusd_backend
