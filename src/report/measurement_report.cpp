#include "zeus/report/measurement_report.hpp"

#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "zeus/platform/utf8.hpp"

namespace zeus::report {
namespace {

std::string format_time(WallTime t, bool utc) {
    const auto since_epoch = t.time_since_epoch();
    const auto secs = std::chrono::floor<std::chrono::seconds>(since_epoch);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - secs).count();
    const std::time_t tt = static_cast<std::time_t>(secs.count());
    std::tm tm{};
    if (utc) {
        gmtime_r(&tt, &tm);
    } else {
        localtime_r(&tt, &tm);
    }
    char buffer[32];
    const std::size_t n = std::strftime(buffer, sizeof buffer, utc ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
    if (utc) return fmt::format("{}.{:03d}Z", std::string_view(buffer, n), static_cast<int>(ms));
    // With the offset from UTC: without it, a time in the hour a DST change repeats is ambiguous.
    char offset[8];
    const std::size_t m = std::strftime(offset, sizeof offset, "%z", &tm);
    return fmt::format("{}.{:03d} {}", std::string_view(buffer, n), static_cast<int>(ms), std::string_view(offset, m));
}

std::string source_key(EnergySource source) {
    switch (source) {
        case EnergySource::HardwareCounter: return "energy_counter";
        case EnergySource::IntegratedPower: return "integrated_power";
        case EnergySource::InstantPowerApproximation: return "instant_power_approximation";
        case EnergySource::WindowLog: return "window_log";
    }
    return "unknown";
}

// A device's source in every format: "lost" for one that stopped answering
// (its energy is unknown, whatever was to measure it), else how it was measured.
std::string device_source(const EnergyValue& value) { return value.lost ? "lost" : source_key(value.source); }

double average_power(double energy_j, double time_s) { return time_s > 0 ? energy_j / time_s : 0.0; }

// JSON has no NaN or infinity.
nlohmann::ordered_json number(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

std::string status_line(const EnergyReport& r) {
    std::string line;
    if (r.child) line = r.child->describe();
    if (r.interrupted_by) {
        if (!line.empty()) line += "; ";
        line += fmt::format("measurement interrupted by {}", signal_name(*r.interrupted_by));
    }
    return line;
}

}  // namespace

Result<OutputFormat> parse_output_format(std::string_view option, std::string_view text) {
    if (text == "human") return OutputFormat::Human;
    if (text == "csv") return OutputFormat::Csv;
    if (text == "json") return OutputFormat::Json;
    return Error{ErrorCode::InvalidArgument, fmt::format("{} {}: unknown format", option, text),
                 "use human, csv or json"};
}

std::string gpu_label(unsigned index) { return fmt::format("GPU {}", index); }
std::string cpu_label(unsigned index) { return fmt::format("CPU {}", index); }

EnergyReport measurement_report(const Measurement& m, std::string command_name, const Gpus& gpus, const Cpus* cpus,
                                const Soc* soc) {
    EnergyReport r;
    r.command_name = std::move(command_name);
    r.start_time = m.start_time;
    r.time_s = m.time.count();
    r.warnings = m.warnings;
    r.simulated = !m.gpu_energy.empty() && gpus.backend_info().simulated;
    for (const auto& [index, value] : m.gpu_energy) {
        std::string name = index < gpus.size() ? gpus[index].identity().name : std::string();
        r.devices.push_back({gpu_label(index), "gpu", index, std::move(name), value.energy.count(),
                             device_source(value), value.warnings, value.lost});
    }
    for (const auto& [index, value] : m.cpu_energy) {
        const bool known = cpus != nullptr && index < cpus->size();
        std::string name = known ? (*cpus)[index].identity().zone_name : std::string();
        r.devices.push_back({cpu_label(index), "cpu", index, std::move(name), value.energy.count(),
                             device_source(value), value.warnings});
    }
    for (const auto& [index, value] : m.dram_energy) {
        const bool known = cpus != nullptr && index < cpus->size();
        std::string name = known ? (*cpus)[index].identity().zone_name + " DRAM" : std::string("DRAM");
        r.devices.push_back({fmt::format("DRAM {}", index), "dram", index, std::move(name), value.energy.count(),
                             device_source(value), value.warnings});
    }
    for (const auto& [metric, value] : m.soc_energy) {
        std::string name = soc != nullptr ? std::string(soc->name()) : std::string();
        r.devices.push_back({"SoC " + metric, "soc", std::nullopt, std::move(name), value.energy.count(),
                             device_source(value), value.warnings});
    }
    return r;
}

double EnergyReport::total_energy_j() const {
    double total = 0.0;
    for (const auto& d : devices) {
        if (d.kind != "soc" && !d.lost) total += d.energy_j;
    }
    return total;
}

std::string source_label(const std::string& source) {
    if (source == "energy_counter") return "energy counter";
    if (source == "integrated_power") return "integrated power";
    if (source == "instant_power_approximation") return "instant power x time";
    return source;
}

std::string iso_utc(WallTime t) { return format_time(t, true); }
std::string local_time(WallTime t) { return format_time(t, false); }

std::string csv_field(const std::string& raw) {
    // A CSV reader (pandas, Excel's UTF-8 import) stops at bytes that are not UTF-8.
    const std::string text = to_utf8(raw);
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

namespace {

nlohmann::ordered_json report_json(const EnergyReport& r) {
    nlohmann::ordered_json j;
    j["command"] = r.command_name;
    if (!r.command.empty()) j["argv"] = r.command;
    if (r.command_name == "run") {
        j["exit_code"] = r.child ? nlohmann::ordered_json(r.child->shell_exit_code()) : nlohmann::ordered_json();
        j["signal"] = r.child && !r.child->exited ? nlohmann::ordered_json(signal_name(r.child->signal))
                                                  : nlohmann::ordered_json();
    }
    j["interrupted"] = r.interrupted_by.has_value();
    if (r.interrupted_by) j["interrupted_by"] = signal_name(*r.interrupted_by);
    j["start_time"] = iso_utc(r.start_time);
    j["time_s"] = number(r.time_s);
    j["simulated"] = r.simulated;
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const auto& d : r.devices) {
        nlohmann::ordered_json dj;
        dj["device"] = d.device;
        dj["kind"] = d.kind;
        dj["index"] = d.index ? nlohmann::ordered_json(*d.index) : nlohmann::ordered_json();
        dj["name"] = d.name;
        dj["energy_j"] = d.lost ? nlohmann::ordered_json() : number(d.energy_j);
        dj["average_power_w"] = d.lost ? nlohmann::ordered_json() : number(average_power(d.energy_j, r.time_s));
        dj["source"] = d.source;
        dj["lost"] = d.lost;
        dj["warnings"] = d.warnings;
        for (const auto& [key, charge] : {std::pair{"carbon_gco2eq", &r.carbon}, std::pair{"cost", &r.cost}}) {
            if (!*charge) continue;
            const auto amount = (*charge)->of(d.device);
            dj[key] = amount ? number(*amount) : nlohmann::ordered_json();
        }
        devices.push_back(std::move(dj));
    }
    j["devices"] = std::move(devices);
    j["total_energy_j"] = number(r.total_energy_j());
    if (r.carbon) j["carbon"] = nlohmann::ordered_json::parse(carbon::charge_json(*r.carbon));
    if (r.cost) j["cost"] = nlohmann::ordered_json::parse(carbon::charge_json(*r.cost));
    j["warnings"] = r.warnings;
    return j;
}

std::string render_json(const EnergyReport& r, bool json_line) {
    if (!json_line) return json_text(report_json(r), 2) + "\n";
    nlohmann::ordered_json line;
    line["type"] = "summary";
    const nlohmann::ordered_json full = report_json(r);
    for (auto it = full.begin(); it != full.end(); ++it) line[it.key()] = *it;
    return json_text(line) + "\n";
}

std::string render_csv(const EnergyReport& r) {
    // Carbon and cost columns only when asked for; an empty cell is "unavailable", never 0.
    std::string out = fmt::format(
        "device,kind,index,name,time_s,energy_j,average_power_w,source,warnings,"
        "simulated{}{}\n",
        r.carbon ? ",carbon_gco2eq" : "", r.cost ? ",cost" : "");
    const auto amount_cell = [](const std::optional<double>& v) {
        return v ? fmt::format(",{:.9g}", *v) : std::string(",");
    };
    for (const auto& d : r.devices) {
        std::string warnings;
        for (const auto& w : d.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
        // A lost device has no energy: empty fields (its source is "lost", device_source).
        const std::string energy = d.lost ? std::string() : fmt::format("{:.6f}", d.energy_j);
        const std::string power = d.lost ? std::string() : fmt::format("{:.6f}", average_power(d.energy_j, r.time_s));
        out += fmt::format("{},{},{},{},{:.6f},{},{},{},{},{}{}{}\n", csv_field(d.device), d.kind,
                           d.index ? std::to_string(*d.index) : std::string(), csv_field(d.name), r.time_s, energy,
                           power, d.source, csv_field(warnings), d.kind == "gpu" && r.simulated ? "true" : "false",
                           r.carbon ? amount_cell(r.carbon->of(d.device)) : "",
                           r.cost ? amount_cell(r.cost->of(d.device)) : "");
    }
    return out;
}

// The argv as one line, arguments with blanks or quotes in single quotes,
// control characters (a newline too) and bytes that are not UTF-8 escaped.
std::string quoted_command(const std::vector<std::string>& command) {
    std::string line;
    for (const auto& raw : command) {
        if (!line.empty()) line += ' ';
        const std::string a = terminal_safe(raw);
        line += raw.find_first_of(" \t\"'") == std::string::npos ? a : "'" + a + "'";
    }
    return line;
}

// One row per device and the total, the names' column as wide as the longest.
std::string device_table(const EnergyReport& r) {
    if (r.devices.empty()) return "No device was measured.\n";
    std::size_t name_width = 4;
    for (const auto& d : r.devices) name_width = std::max(name_width, d.name.size());
    std::string out = fmt::format("{:<8} {:<{}} {:>12} {:>14}  {}\n", "Device", "Name", name_width, "Energy (J)",
                                  "Avg power (W)", "Source");
    for (const auto& d : r.devices) {
        if (d.lost) {
            out += fmt::format("{:<8} {:<{}} {:>12} {:>14}  {}\n", d.device, d.name, name_width, "lost", "-",
                               "lost (see warnings; not in the total)");
            continue;
        }
        out += fmt::format("{:<8} {:<{}} {:>12.3f} {:>14.2f}  {}\n", d.device, d.name, name_width, d.energy_j,
                           average_power(d.energy_j, r.time_s), source_label(d.source));
    }
    const double total = r.total_energy_j();
    out += fmt::format("{:<8} {:<{}} {:>12.3f} {:>14.2f}\n", "Total", "", name_width, total,
                       average_power(total, r.time_s));
    return out;
}

// "Carbon:   12.3 gCO2eq (ElectricityMaps, zone DE; 10:00Z 419 g/kWh, ...)"
std::string charge_lines(const EnergyReport& r) {
    std::string out;
    for (const auto* charge : {&r.carbon, &r.cost}) {
        if (!*charge) continue;
        std::string line = carbon::charge_human(**charge);
        line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
        const auto colon = line.find(": ");
        out += fmt::format("{:<10}{}\n", line.substr(0, colon + 1), line.substr(colon + 2));
    }
    return out;
}

// The report's warnings, then the charges', then each device's.
std::string warning_lines(const EnergyReport& r) {
    std::vector<std::string> warnings = r.warnings;
    for (const auto* charge : {&r.carbon, &r.cost}) {
        if (*charge) warnings.insert(warnings.end(), (*charge)->provenance.warnings.begin(),
                                     (*charge)->provenance.warnings.end());
    }
    for (const auto& d : r.devices) {
        for (const auto& w : d.warnings) warnings.push_back(d.device + ": " + w);
    }
    if (warnings.empty()) return {};
    std::string out = "Warnings:\n";
    for (const auto& w : warnings) out += "  " + w + "\n";
    return out;
}

std::string render_human_report(const EnergyReport& r) {
    std::string out;
    if (!r.command.empty()) out += fmt::format("Command:  {}\n", quoted_command(r.command));
    if (const auto status = status_line(r); !status.empty()) out += fmt::format("Status:   {}\n", status);
    out += fmt::format("Time:     {:.3f} s\n", r.time_s);
    if (r.simulated) out += "GPUs:     simulated (the Zeus GPU simulator, not real hardware)\n";
    out += device_table(r);
    out += charge_lines(r);
    out += warning_lines(r);
    // A command's arguments, a file name or a warning must not drive the terminal.
    return terminal_safe_lines(out);
}

}  // namespace

std::string render_report(const EnergyReport& r, OutputFormat format, bool json_line) {
    switch (format) {
        case OutputFormat::Json:
            return render_json(r, json_line);
        case OutputFormat::Csv:
            return render_csv(r);
        case OutputFormat::Human:
            break;
    }
    return render_human_report(r);
}

std::string render_power_header(const std::vector<std::string>& devices, OutputFormat format) {
    if (format != OutputFormat::Csv) return {};
    std::string out = "timestamp,elapsed_s";
    for (const auto& d : devices) out += "," + csv_field(d + " power (W)");
    return out + "\n";
}

std::string render_power_row(const std::vector<std::string>& devices, const PowerRow& row, OutputFormat format) {
    switch (format) {
        case OutputFormat::Csv: {
            std::string out = fmt::format("{},{:.3f}", iso_utc(row.wall), row.elapsed_s);
            for (std::size_t i = 0; i < devices.size(); ++i) {
                const auto& w = i < row.watts.size() ? row.watts[i] : std::nullopt;
                out += w ? fmt::format(",{:.3f}", *w) : std::string(",");
            }
            return out + "\n";
        }
        case OutputFormat::Json: {
            nlohmann::ordered_json j;
            j["type"] = "power";
            j["timestamp"] = iso_utc(row.wall);
            j["elapsed_s"] = row.elapsed_s;
            nlohmann::ordered_json power = nlohmann::ordered_json::object();
            for (std::size_t i = 0; i < devices.size(); ++i) {
                const auto& w = i < row.watts.size() ? row.watts[i] : std::nullopt;
                power[devices[i]] = w ? number(*w) : nlohmann::ordered_json();
            }
            j["power_w"] = std::move(power);
            return json_text(j) + "\n";
        }
        case OutputFormat::Human: break;
    }
    std::string out = local_time(row.wall);
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto& w = i < row.watts.size() ? row.watts[i] : std::nullopt;
        out += w ? fmt::format("  {}: {:.1f} W", devices[i], *w) : fmt::format("  {}: n/a", devices[i]);
    }
    return out + "\n";
}

}  // namespace zeus::report
