#include "device/zeusd/zeusd_gpu.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace zeus::zeusd_backend {
namespace {

// Control calls wait for the daemon to have made the change, so failures
// come back to the caller (the original's device layer does the same).
constexpr bool kBlock = true;

struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    bool operator==(const PciAddress&) const = default;
};

// "0000:01:00.0" (zeusd) and "00000000:01:00.0" (NVML) name the same
// function; compare numbers, not text.
std::optional<PciAddress> parse_pci(const std::string& text) {
    PciAddress a;
    char tail = 0;
    if (std::sscanf(text.c_str(), "%x:%x:%x.%x%c", &a.domain, &a.bus, &a.device, &a.function, &tail) != 4) {
        return std::nullopt;
    }
    return a;
}

std::optional<unsigned> daemon_id_by_pci(const ZeusdDiscovery& discovery, const std::string& local) {
    const auto wanted = parse_pci(local);
    if (!wanted) return std::nullopt;
    for (const auto& gpu : discovery.gpus) {
        if (parse_pci(gpu.pci_address) == wanted) return gpu.id;
    }
    return std::nullopt;
}

std::string env_name(const ZeusdConfig& config) {
    return config.transport == ZeusdConfig::Transport::UnixSocket ? "ZEUSD_SOCK_PATH" : "ZEUSD_HOST_PORT";
}

}  // namespace

ZeusdGpu::ZeusdGpu(std::unique_ptr<Gpu> local, std::shared_ptr<ZeusdClient> client, unsigned daemon_id, Status control)
    : local_(std::move(local)), client_(std::move(client)), daemon_id_(daemon_id), control_(std::move(control)) {}

Status ZeusdGpu::may_control(std::string_view what) const {
    if (auto s = local_->status(); !s) return s;
    if (control_ && client_) return {};
    Error e = control_ ? Error{ErrorCode::Unavailable, "no zeusd client", "", 0} : control_.error();
    e.message = fmt::format("GPU {} (NVML/daemon index {}): cannot {}: GPU settings are changed through zeusd here, "
                            "and {}",
                            local_->identity().index, daemon_id_, what, e.message);
    return e;
}

Status ZeusdGpu::set_power_limit(Milliwatts limit) {
    if (auto s = may_control("set the power limit"); !s) return s;
    // Refused here with the range, as the local backend does, rather than
    // as a daemon's 400 without it.
    if (auto range = local_->power_limit_constraints(); range && (limit < range->min || limit > range->max)) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("power limit {} W is outside GPU {}'s range {}–{} W",
                                 quantity_cast<Watts>(limit).count(), identity().index,
                                 quantity_cast<Watts>(range->min).count(), quantity_cast<Watts>(range->max).count()),
                     "choose a limit inside the range `zeus show-env` prints", 0};
    }
    return client_->set_power_limit({daemon_id_}, limit, kBlock);
}

Status ZeusdGpu::reset_power_limit() {
    // zeusd has no reset route; the default limit is read locally and set.
    if (auto s = may_control("reset the power limit"); !s) return s;
    auto fallback = local_->default_power_limit();
    if (!fallback) return fallback.error();
    return client_->set_power_limit({daemon_id_}, *fallback, kBlock);
}

Status ZeusdGpu::check_power_limit_control() {
    if (auto s = may_control("change the power limit"); !s) return s;
    auto current = local_->power_limit();
    if (!current) return current.error();
    return client_->set_power_limit({daemon_id_}, *current, kBlock);
}

Status ZeusdGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
    if (auto s = may_control("lock the graphics clocks"); !s) return s;
    if (min.count() <= 0 || max.count() <= 0 || min > max) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("GPU {}: locked graphics clock range {}–{} MHz is invalid", identity().index,
                                 min.count(), max.count()),
                     "give 0 < min <= max, in MHz, from the supported clocks `zeus show-env` lists", 0};
    }
    return client_->set_gpu_locked_clocks({daemon_id_}, min, max, kBlock);
}

Status ZeusdGpu::reset_gpu_locked_clocks() {
    if (auto s = may_control("reset the graphics clocks"); !s) return s;
    return client_->reset_gpu_locked_clocks({daemon_id_}, kBlock);
}

Status ZeusdGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
    if (auto s = may_control("lock the memory clocks"); !s) return s;
    if (min.count() <= 0 || max.count() <= 0 || min > max) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("GPU {}: locked memory clock range {}–{} MHz is invalid", identity().index,
                                 min.count(), max.count()),
                     "give 0 < min <= max, in MHz, from the supported clocks `zeus show-env` lists", 0};
    }
    return client_->set_memory_locked_clocks({daemon_id_}, min, max, kBlock);
}

Status ZeusdGpu::reset_memory_locked_clocks() {
    if (auto s = may_control("reset the memory clocks"); !s) return s;
    return client_->reset_memory_locked_clocks({daemon_id_}, kBlock);
}

Status ZeusdGpu::reset_locked_clocks() {
    if (auto s = may_control("reset the locked clocks"); !s) return s;
    return client_->reset_locked_clocks({daemon_id_}, kBlock);
}

Status ZeusdGpu::set_persistence_mode(bool enabled) {
    if (auto s = may_control("set the persistence mode"); !s) return s;
    return client_->set_persistence_mode({daemon_id_}, enabled, kBlock);
}

ZeusdControlSummary relay_control(std::vector<std::unique_ptr<Gpu>>& gpus, const std::string& backend,
                                  const ZeusdConfig& config, std::vector<std::string>& warnings) {
    ZeusdControlSummary summary{config.endpoint(), Status()};
    auto client = ZeusdClient::connect(config);
    std::shared_ptr<ZeusdClient> shared;
    if (!client) {
        summary.control = client.error();
    } else {
        shared = *client;
        summary.control = shared->require(ZeusdRequirements{.control_gpu = true});
    }
    if (!summary.control && !gpus.empty()) {
        warnings.push_back(fmt::format("GPU settings cannot be changed through zeusd ({} is set; reads are local and "
                                       "unaffected): {}",
                                       env_name(config), summary.control.error().describe()));
    }
    for (auto& gpu : gpus) {
        const GpuIdentity& id = gpu->identity();
        std::optional<unsigned> daemon_id;
        Status control = summary.control;
        if (backend == "nvml") {
            daemon_id = id.physical_index;  // zeusd numbers NVIDIA GPUs as NVML does
        } else if (shared) {
            daemon_id = daemon_id_by_pci(shared->discovery(), id.pci_bus_id);
            if (!daemon_id && control) {
                control = Error{ErrorCode::NotFound,
                                fmt::format("zeusd at {} lists no GPU at PCI address {}", config.endpoint(),
                                            id.pci_bus_id.empty() ? "(unknown)" : id.pci_bus_id),
                                "run zeusd on this machine, with the same GPU backend (`zeusd serve --gpu-backend`)",
                                0};
            }
        }
        if (control && daemon_id) {
            control = shared->require(ZeusdRequirements{.control_gpu = true, .gpu_ids = {*daemon_id}});
        }
        gpu = std::make_unique<ZeusdGpu>(std::move(gpu), shared, daemon_id.value_or(id.physical_index),
                                         std::move(control));
    }
    return summary;
}

}  // namespace zeus::zeusd_backend
