#include "report/environment_json.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "zeus/platform/privileges.hpp"
#include "zeus/version.hpp"

namespace zeus::report {
namespace {

nlohmann::ordered_json capability_json(const Capability& c) {
    nlohmann::ordered_json j{{"supported", c.supported}};
    if (!c.supported) j["reason"] = c.reason;
    return j;
}

nlohmann::ordered_json domain_json(const PowerDomainCapability& c) {
    nlohmann::ordered_json j = capability_json(c.support);
    if (c.support.supported) j["scope"] = std::string(to_string(c.scope));
    return j;
}

nlohmann::ordered_json error_json(const Error& e) {
    nlohmann::ordered_json j{{"code", std::string(to_string(e.code))}, {"message", e.message}};
    if (!e.hint.empty()) j["fix"] = e.hint;
    return j;
}

double watts(Milliwatts mw) { return quantity_cast<Watts>(mw).count(); }

nlohmann::ordered_json gpu_json(Gpu& gpu, const GpuBackendInfo& info, bool probe_control) {
    const GpuIdentity& id = gpu.identity();
    nlohmann::ordered_json j{{"index", id.index}, {"physical_index", id.physical_index}};
    if (auto status = gpu.status(); !status) {
        j["available"] = false;
        j["error"] = error_json(status.error());
        return j;
    }
    j["available"] = true;
    j["name"] = id.name;
    j["uuid"] = id.uuid;
    j["pci_bus_id"] = id.pci_bus_id;
    j["architecture"] = std::string(to_string(id.architecture));
    const GpuCapabilities& caps = gpu.capabilities();
    j["energy_counter"] = capability_json(caps.energy_counter);
    j["power"] = {{"device_instant", domain_json(caps.instant_power)},
                  {"device_average", domain_json(caps.average_power)},
                  {"memory_average", domain_json(caps.memory_power)}};
    nlohmann::ordered_json limit = capability_json(caps.power_limit);
    if (caps.power_limit.supported) {
        if (auto range = gpu.power_limit_constraints()) {
            limit["min_w"] = watts(range->min);
            limit["max_w"] = watts(range->max);
        }
        if (auto d = gpu.default_power_limit()) limit["default_w"] = watts(*d);
        if (auto now = gpu.power_limit()) limit["current_w"] = watts(*now);
        if (probe_control) {
            auto control = gpu.check_power_limit_control();
            limit["settable"] = control.ok();
            limit["settable_basis"] = "probe";
            if (!control) limit["not_settable_reason"] = error_json(control.error());
        } else if (info.zeusd_endpoint) {
            // Settings go through the daemon: what counts is what it lets this user do.
            limit["settable"] = info.zeusd_control.ok();
            limit["settable_basis"] = "zeusd";
            if (!info.zeusd_control) limit["not_settable_reason"] = error_json(info.zeusd_control.error());
        } else {
            const bool admin = has_cap_sys_admin();
            limit["settable"] = admin;
            limit["settable_basis"] = "capabilities";
            if (!admin) {
                limit["not_settable_reason"] = error_json(
                    Error{ErrorCode::NoPermission, "this process lacks CAP_SYS_ADMIN",
                          "changing GPU settings needs root (CAP_SYS_ADMIN); run as root or grant the capability", 0});
            }
        }
    }
    j["power_limit"] = limit;
    if (auto t = gpu.temperature()) j["temperature_c"] = t->count();
    if (auto p = gpu.persistence_mode()) j["persistence_mode"] = *p;
    return j;
}

std::string capability_line(const nlohmann::ordered_json& c) {
    if (c.at("supported").get<bool>()) {
        return c.contains("scope") ? fmt::format("yes ({} scope)", c.at("scope").get<std::string>()) : "yes";
    }
    return "no: " + c.at("reason").get<std::string>();
}

std::string error_line(const nlohmann::ordered_json& e) {
    std::string s = e.at("message").get<std::string>();
    if (e.contains("fix")) s += "\n      fix: " + e.at("fix").get<std::string>();
    return s;
}

nlohmann::ordered_json status_json(const Status& s) {
    if (s) return nlohmann::ordered_json{{"available", true}};
    return nlohmann::ordered_json{{"available", false}, {"error", error_json(s.error())}};
}

}  // namespace

nlohmann::ordered_json describe_cpus(const Cpus& cpus) {
    nlohmann::ordered_json j{{"powercap_root", cpus.powercap_root()}};
    if (!cpus.status()) j["error"] = error_json(cpus.status().error());
    j["warnings"] = cpus.warnings();
    nlohmann::ordered_json packages = nlohmann::ordered_json::array();
    for (const auto& cpu : cpus) {
        const CpuIdentity& id = cpu->identity();
        nlohmann::ordered_json p{{"index", id.index}, {"zone", fmt::format("intel-rapl:{}", id.zone_index)},
                                 {"name", id.zone_name}, {"path", id.path}};
        p.update(status_json(cpu->status()));
        nlohmann::ordered_json dram = status_json(cpu->has_dram() ? cpu->dram_status()
                                                                  : Status(Error{ErrorCode::NotSupported,
                                                                                 "this package has no dram zone",
                                                                                 {}, 0}));
        if (id.dram_path) dram["path"] = *id.dram_path;
        p["dram"] = dram;
        packages.push_back(p);
    }
    j["packages"] = packages;
    return j;
}

nlohmann::ordered_json describe_soc(const Soc& soc) {
    nlohmann::ordered_json j{{"name", std::string(soc.name())}};
    j.update(status_json(soc.status()));
    if (!soc.available() && soc.metrics().empty()) return j;
    j["energy_source"] = std::string(to_string(soc.energy_source()));
    nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
    for (const auto& m : soc.metrics()) {
        nlohmann::ordered_json mj{{"metric", std::string(to_string(m.metric))}};
        mj.update(capability_json(m.support));
        mj["rails"] = m.rails;
        metrics.push_back(mj);
    }
    j["metrics"] = metrics;
    nlohmann::ordered_json rails = nlohmann::ordered_json::array();
    for (const auto& r : soc.rails()) {
        nlohmann::ordered_json rj{{"name", r.name},
                                  {"metric", r.metric ? nlohmann::ordered_json(std::string(to_string(*r.metric)))
                                                      : nlohmann::ordered_json(nullptr)},
                                  {"source", r.source}};
        rj.update(status_json(r.status));
        if (r.power) rj["power_w"] = r.power->count();
        rails.push_back(rj);
    }
    j["rails"] = rails;
    return j;
}

nlohmann::ordered_json describe_zeusd(const std::optional<ZeusdConfig>& config) {
    if (!config) return nullptr;
    nlohmann::ordered_json j{{"endpoint", config->endpoint()}, {"environment", config->as_environment()},
                             {"token_configured", config->token.has_value()}};
    auto connected = ZeusdClient::connect(*config);
    if (!connected) {
        j["reachable"] = false;
        j["error"] = error_json(connected.error());
        return j;
    }
    const ZeusdClient& client = **connected;
    const ZeusdDiscovery& d = client.discovery();
    j["reachable"] = true;
    j["version"] = d.version ? nlohmann::ordered_json(*d.version) : nlohmann::ordered_json(nullptr);
    j["enabled_api_groups"] = d.enabled_api_groups;
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (const auto& g : d.gpus) {
        gpus.push_back({{"id", g.id}, {"name", g.name}, {"pci_address", g.pci_address},
                        {"cumulative_energy_available", g.cumulative_energy_available}});
    }
    j["gpus"] = gpus;
    nlohmann::ordered_json cpus = nlohmann::ordered_json::array();
    for (const auto& c : d.cpus) cpus.push_back({{"id", c.id}, {"dram_available", c.dram_available}});
    j["cpus"] = cpus;
    j["auth_required"] = d.auth_required;
    if (client.auth_error()) j["auth_error"] = error_json(*client.auth_error());
    if (const auto& who = client.identity()) {
        nlohmann::ordered_json user{{"sub", who->sub}, {"scopes", who->scopes}};
        user["expires"] = who->expires ? nlohmann::ordered_json(fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                                                                            std::chrono::floor<std::chrono::seconds>(
                                                                                *who->expires)))
                                       : nlohmann::ordered_json(nullptr);
        j["user"] = user;
    }
    nlohmann::ordered_json capabilities;
    for (ZeusdApiGroup group : {ZeusdApiGroup::GpuRead, ZeusdApiGroup::GpuControl, ZeusdApiGroup::CpuRead}) {
        ZeusdRequirements needs;
        needs.read_gpu = group == ZeusdApiGroup::GpuRead;
        needs.control_gpu = group == ZeusdApiGroup::GpuControl;
        needs.read_cpu = group == ZeusdApiGroup::CpuRead;
        const Status allowed = client.require(needs);
        nlohmann::ordered_json c{{"permitted", allowed.ok()}};
        if (!allowed) c["reason"] = error_json(allowed.error());
        capabilities[std::string(to_string(group))] = c;
    }
    j["capabilities"] = capabilities;
    if (capabilities["gpu-control"]["permitted"].get<bool>()) {
        j["control_note"] = "GPU settings changed through zeusd are undone when the process that changed them exits "
                            "(or zeusd stops); a short-lived client such as curl adds persist=true to keep a change";
    }
    return j;
}

nlohmann::ordered_json describe_environment(Gpus& gpus, const GpuOptions& options, bool probe_control) {
    const GpuBackendInfo& info = gpus.backend_info();
    nlohmann::ordered_json backend{{"name", info.backend}, {"library", info.library_path}, {"simulated", info.simulated}};
    if (!info.driver_version.empty()) backend["driver_version"] = info.driver_version;
    if (!info.nvml_version.empty()) backend["nvml_version"] = info.nvml_version;
    if (info.cuda_driver_version) {
        backend["cuda_driver_version"] =
            fmt::format("{}.{}", *info.cuda_driver_version / 1000, (*info.cuda_driver_version % 1000) / 10);
    }
    backend["physical_gpu_count"] = info.physical_gpu_count;

    nlohmann::ordered_json report{{"zeus_version", ZEUS_VERSION_STRING}, {"gpu_backend", backend}};
    report["cuda_visible_devices"] =
        options.visible_devices ? nlohmann::ordered_json(*options.visible_devices) : nlohmann::ordered_json(nullptr);
    report["hip_visible_devices"] = options.hip_visible_devices ? nlohmann::ordered_json(*options.hip_visible_devices)
                                                                : nlohmann::ordered_json(nullptr);
    if (!gpus.status()) report["gpu_error"] = error_json(gpus.status().error());
    report["warnings"] = gpus.warnings();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& gpu : gpus) list.push_back(gpu_json(*gpu, info, probe_control));
    report["gpus"] = list;
    return report;
}

bool anything_measurable(const nlohmann::ordered_json& report) {
    if (report.contains("cpus")) {
        for (const auto& cpu : report.at("cpus").at("packages")) {
            if (cpu.at("available").get<bool>()) return true;
        }
    }
    if (report.contains("soc") && report.at("soc").at("available").get<bool>()) return true;
    for (const auto& gpu : report.at("gpus")) {
        if (!gpu.at("available").get<bool>()) continue;
        if (gpu.at("energy_counter").at("supported").get<bool>()) return true;
        for (const auto& [name, domain] : gpu.at("power").items()) {
            if (domain.at("supported").get<bool>()) return true;
        }
    }
    return false;
}

namespace {

std::string render_zeusd(const nlohmann::ordered_json& z) {
    std::string out = "\n## zeusd (privileged daemon)\n";
    if (z.is_null()) {
        return out + "Not configured: GPU settings and CPU energy are accessed directly (set ZEUSD_SOCK_PATH or "
                     "ZEUSD_HOST_PORT to use a daemon)\n";
    }
    out += fmt::format("Endpoint: {} ({})\n", z.at("endpoint").get<std::string>(), z.at("environment").get<std::string>());
    if (!z.at("reachable").get<bool>()) return out + "Reachable: NO: " + error_line(z.at("error")) + "\n";
    out += fmt::format("Reachable: yes{}\n", z.at("version").is_null()
                                                  ? std::string()
                                                  : ", version " + z.at("version").get<std::string>());
    std::vector<std::string> groups = z.at("enabled_api_groups").get<std::vector<std::string>>();
    out += fmt::format("Enabled API groups: {}\n", groups.empty() ? "none" : fmt::format("{}", fmt::join(groups, ", ")));
    std::vector<std::string> gpus;
    for (const auto& g : z.at("gpus")) gpus.push_back(std::to_string(g.at("id").get<unsigned>()));
    std::vector<std::string> cpus;
    for (const auto& c : z.at("cpus")) cpus.push_back(std::to_string(c.at("id").get<unsigned>()));
    out += fmt::format("Daemon devices: GPUs [{}], CPUs [{}]\n", fmt::join(gpus, ", "), fmt::join(cpus, ", "));
    if (!z.at("auth_required").get<bool>()) {
        out += "Authentication: not required\n";
    } else if (z.contains("auth_error")) {
        out += "Authentication: required; NOT AUTHENTICATED: " + error_line(z.at("auth_error")) + "\n";
    } else if (z.contains("user")) {
        const auto& u = z.at("user");
        const auto scopes = u.at("scopes").get<std::vector<std::string>>();
        out += fmt::format("Authentication: required; user {}, scopes [{}], token expires {}\n",
                           u.at("sub").get<std::string>(), fmt::join(scopes, ", "),
                           u.at("expires").is_null() ? "never" : u.at("expires").get<std::string>());
    }
    out += "Through zeusd, this process may:\n";
    for (const auto& [group, label] : {std::pair{"gpu-read", "read GPUs"}, std::pair{"gpu-control", "control GPUs"},
                                       std::pair{"cpu-read", "read CPUs"}}) {
        const auto& c = z.at("capabilities").at(group);
        out += fmt::format("  {:<13} ({:<11}): {}\n", label, group,
                           c.at("permitted").get<bool>() ? std::string("yes") : "no: " + error_line(c.at("reason")));
    }
    if (z.contains("control_note")) out += "Note: " + z.at("control_note").get<std::string>() + "\n";
    return out;
}

// The GPU backend, the visible-devices variables, and why there are no GPUs when there are none.
std::string render_gpu_backend(const nlohmann::ordered_json& r) {
    std::string out = "\n## GPUs\n";
    const auto& b = r.at("gpu_backend");
    out += fmt::format("Backend: {}{}\n", b.at("name").get<std::string>(),
                       b.at("simulated").get<bool>() ? " (SIMULATED: the Zeus GPU simulator, not real hardware)" : "");
    out += fmt::format("NVML library: {}\n", b.at("library").get<std::string>());
    if (b.contains("driver_version")) out += fmt::format("Driver version: {}\n", b.at("driver_version").get<std::string>());
    if (b.contains("nvml_version")) out += fmt::format("NVML version: {}\n", b.at("nvml_version").get<std::string>());
    if (b.contains("cuda_driver_version")) {
        out += fmt::format("CUDA driver version: {}\n", b.at("cuda_driver_version").get<std::string>());
    }
    const auto& cvd = r.at("cuda_visible_devices");
    out += fmt::format("CUDA_VISIBLE_DEVICES={}\n", cvd.is_null() ? "[NOT SET]" : cvd.get<std::string>());
    if (const auto& hvd = r.at("hip_visible_devices"); !hvd.is_null()) {
        out += fmt::format("HIP_VISIBLE_DEVICES={}\n", hvd.get<std::string>());
    }
    if (r.contains("gpu_error")) out += "No GPUs available: " + error_line(r.at("gpu_error")) + "\n";
    for (const auto& w : r.at("warnings")) out += "Warning: " + w.get<std::string>() + "\n";
    return out;
}

std::string render_power_limit(const nlohmann::ordered_json& pl) {
    if (!pl.at("supported").get<bool>()) return fmt::format("    power limit:       {}\n", capability_line(pl));
    std::string out =
        fmt::format("    power limit:       {} W (range {}–{} W, default {} W)\n", pl.value("current_w", 0.0),
                    pl.value("min_w", 0.0), pl.value("max_w", 0.0), pl.value("default_w", 0.0));
    const std::string basis = pl.value("settable_basis", "");
    out += fmt::format("    set power limit:   {}{}\n",
                       pl.value("settable", false) ? std::string("permitted")
                                                   : "not permitted: " + error_line(pl.at("not_settable_reason")),
                       basis == "probe"   ? " (probed)"
                       : basis == "zeusd" ? " (through zeusd, from its groups and this token's scopes)"
                                          : " (from process capabilities; --check-control to probe)");
    return out;
}

// One GPU: its physical and Zeus indices, then what can be measured and controlled.
std::string render_gpu(const nlohmann::ordered_json& g) {
    const auto idx = g.at("index").get<unsigned>();
    const auto phys = g.at("physical_index").get<unsigned>();
    if (!g.at("available").get<bool>()) {
        return fmt::format("  GPU {} -> GPU {}: UNAVAILABLE: {}\n", phys, idx, error_line(g.at("error")));
    }
    std::string out = fmt::format("  GPU {} -> GPU {} ({}, {}, {}, {})\n", phys, idx, g.at("name").get<std::string>(),
                                  g.at("architecture").get<std::string>(), g.at("uuid").get<std::string>(),
                                  g.at("pci_bus_id").get<std::string>());
    out += fmt::format("    energy counter:    {}\n", capability_line(g.at("energy_counter")));
    for (const auto& [domain, label] :
         {std::pair{"device_instant", "instant power:"}, std::pair{"device_average", "average power:"},
          std::pair{"memory_average", "memory power:"}}) {
        out += fmt::format("    {:<18} {}\n", label, capability_line(g.at("power").at(domain)));
    }
    out += render_power_limit(g.at("power_limit"));
    if (g.contains("temperature_c"))
        out += fmt::format("    temperature:       {} °C\n", g.at("temperature_c").get<double>());
    if (g.contains("persistence_mode")) {
        out += fmt::format("    persistence mode:  {}\n", g.at("persistence_mode").get<bool>() ? "on" : "off");
    }
    return out;
}

std::string render_cpus(const nlohmann::ordered_json& c) {
    std::string out =
        c.value("powercap_root", "").starts_with("zeusd ") ? "\n## CPUs (RAPL, through zeusd)\n" : "\n## CPUs (RAPL)\n";
    if (c.contains("error")) out += "No CPU energy: " + error_line(c.at("error")) + "\n";
    for (const auto& w : c.at("warnings")) out += "Warning: " + w.get<std::string>() + "\n";
    for (const auto& p : c.at("packages")) {
        out += fmt::format(
            "  CPU {} ({}, {}): {}\n", p.at("index").get<unsigned>(), p.at("zone").get<std::string>(),
            p.at("name").get<std::string>(),
            p.at("available").get<bool>() ? "package energy available" : "UNAVAILABLE: " + error_line(p.at("error")));
        const auto& d = p.at("dram");
        out += fmt::format("    DRAM: {}\n", d.at("available").get<bool>() ? "available" : error_line(d.at("error")));
    }
    return out;
}

std::string render_soc(const nlohmann::ordered_json& s) {
    std::string out = "\n## SoC\n";
    if (!s.at("available").get<bool>()) {
        out += "No SoC available: " + error_line(s.at("error")) + "\n";
    } else {
        out += fmt::format("{} (energy from {})\n", s.at("name").get<std::string>(),
                           s.value("energy_source", std::string("?")));
    }
    if (s.contains("metrics")) {
        for (const auto& m : s.at("metrics")) {
            out += fmt::format("  {:<6} {}\n", m.at("metric").get<std::string>() + ":", capability_line(m));
        }
        for (const auto& rail : s.at("rails")) {
            out += fmt::format("  rail {} ({}): {}\n", rail.at("name").get<std::string>(),
                               rail.at("metric").is_null() ? "no metric" : rail.at("metric").get<std::string>(),
                               rail.at("available").get<bool>() ? fmt::format("{:.2f} W", rail.value("power_w", 0.0))
                                                                : error_line(rail.at("error")));
        }
    }
    return out;
}

}  // namespace

std::string render_human(const nlohmann::ordered_json& r) {
    std::string out = fmt::format("Zeus {}\n", r.at("zeus_version").get<std::string>());
    if (r.contains("zeusd")) out += render_zeusd(r.at("zeusd"));
    out += render_gpu_backend(r);
    if (!r.at("gpus").empty()) out += "Device index mapping: physical (nvidia-smi) -> Zeus (any CUDA application)\n";
    for (const auto& g : r.at("gpus")) out += render_gpu(g);
    if (r.contains("cpus")) out += render_cpus(r.at("cpus"));
    if (r.contains("soc")) out += render_soc(r.at("soc"));
    if (!anything_measurable(r)) {
        out += "\nNothing measurable was found.";
        if (!r.at("gpu_backend").at("simulated").get<bool>())
            out += " To try Zeus without a GPU: zeus show-env --simulate";
        out += "\n";
    }
    return out;
}

}  // namespace zeus::report
