#include "slurm/energy_record.hpp"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "zeus/device/zeusd_client.hpp"

namespace zeus::slurm {
namespace {

using Counters = std::map<unsigned, Millijoules>;

Result<Counters> read_gpu_counters(ZeusdClient& client, const std::vector<unsigned>& ids) {
    ZeusdRequirements needs;
    needs.read_gpu = true;
    needs.gpu_ids = ids;
    if (auto allowed = client.require(needs); !allowed.ok()) return allowed.error();
    return client.gpu_energy(ids);
}

// The packages' counters, and DRAM's when `dram` (or why DRAM has none).
struct CpuReading {
    CpuCounters package;
    std::optional<CpuCounters> dram;
    std::string dram_reason;  // set when DRAM was asked for and is missing
};

Result<CpuReading> read_cpu_counters(ZeusdClient& client, const std::vector<unsigned>& packages, bool dram) {
    ZeusdRequirements needs;
    needs.read_cpu = true;
    needs.cpu_ids = packages;
    if (auto allowed = client.require(needs); !allowed.ok()) return allowed.error();
    auto energy = client.cpu_energy(packages, true, dram);
    if (!energy.ok()) return energy.error();
    CpuReading reading;
    CpuCounters dram_counters;
    for (const unsigned id : packages) {
        const auto found = energy->find(id);
        if (found == energy->end() || !found->second.cpu) {
            return Error{ErrorCode::NoData, fmt::format("zeusd gave no package energy for CPU {}", id), "", 0};
        }
        reading.package[id] = *found->second.cpu;
        if (found->second.dram) {
            dram_counters[id] = *found->second.dram;
        } else if (reading.dram_reason.empty()) {
            reading.dram_reason = fmt::format("DRAM not measured: zeusd reads no DRAM zone for CPU package {}", id);
        }
    }
    if (dram && reading.dram_reason.empty()) reading.dram = std::move(dram_counters);
    if (!dram) reading.dram_reason.clear();
    return reading;
}

using Connection = Result<std::shared_ptr<ZeusdClient>>;

std::string not_measured_at(std::string_view edge, const Error& error) {
    return fmt::format("no reading at its {}: {}", edge, error.describe());
}

double unix_seconds(std::chrono::system_clock::time_point time) {
    return std::chrono::duration<double>(time.time_since_epoch()).count();
}

std::chrono::system_clock::time_point from_unix_seconds(double seconds) {
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds)));
}

std::string utc_text(std::chrono::system_clock::time_point time) {
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(time)));
}

template <class Energy>
double joules(Energy energy) {
    return quantity_cast<Joules>(energy).count();
}

template <class Energy>
Energy total_of(const std::map<unsigned, Energy>& energy) {
    Energy total{0};
    for (const auto& [id, value] : energy) total += value;
    return total;
}

// The energy of each device between the two readings, or why there is none.
// `device` names one ("GPU 0"), `hint` says why its counter may go back.
template <class Energy>
Result<std::map<unsigned, Energy>> subtract(const std::map<unsigned, Energy>& start,
                                            const std::map<unsigned, Energy>& end, std::string_view device,
                                            std::string_view hint) {
    std::map<unsigned, Energy> energy;
    for (const auto& [id, begin] : start) {
        const auto found = end.find(id);
        if (found == end.end()) {
            return Error{ErrorCode::NoData, fmt::format("zeusd gave no end reading for {} {}", device, id), "", 0};
        }
        if (found->second < begin) {
            return Error{ErrorCode::InvalidState,
                         fmt::format("{} {}'s energy counter went back during the job ({} then {})", device, id,
                                     begin.count(), found->second.count()),
                         std::string(hint), 0};
        }
        energy[id] = found->second - begin;
    }
    return energy;
}

constexpr std::string_view kGpuCounterReset =
    "the driver was reloaded or the GPU reset; the energy of this window is unknown";
constexpr std::string_view kCpuCounterReset =
    "zeusd restarted during the job (its CPU counters count from its start); the energy of this window is unknown";

template <class Energy>
nlohmann::json counters_json(const std::map<unsigned, Energy>& counters) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [id, value] : counters) out[std::to_string(id)] = value.count();
    return out;
}

template <class Energy>
std::map<unsigned, Energy> parse_counters(const nlohmann::json& in) {
    std::map<unsigned, Energy> counters;
    for (const auto& [id, value] : in.items()) {
        counters[static_cast<unsigned>(std::stoul(id))] = Energy(value.template get<std::int64_t>());
    }
    return counters;
}

template <class Energy>
nlohmann::json optional_counters_json(const std::optional<std::map<unsigned, Energy>>& counters) {
    return counters ? counters_json(*counters) : nlohmann::json(nullptr);
}

std::string id_list_text(const std::vector<unsigned>& ids) { return fmt::format("{}", fmt::join(ids, ",")); }

std::string step_words(const RecordIdentity& identity) {
    if (identity.step == "job") return fmt::format("job {}", identity.job_id);
    return fmt::format("job {} step {}", identity.job_id, identity.step);
}

// "cpu_packages", "cpu_energy_j", "dram_energy_j" and "cpu_reason" (docs/slurm.md).
void add_cpu_json(nlohmann::json& out, const EnergyRecord& record) {
    const auto per_package = [](const std::optional<CpuCounters>& energy) {
        if (!energy) return nlohmann::json(nullptr);
        nlohmann::json joules_of = nlohmann::json::object();
        for (const auto& [id, value] : *energy) joules_of[std::to_string(id)] = joules(value);
        return joules_of;
    };
    out["cpu_packages"] = record.start.cpu.holding.packages;
    out["cpu_energy_j"] = per_package(record.cpu_energy);
    out["dram_energy_j"] = per_package(record.dram_energy);
    out["cpu_reason"] = record.cpu_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(record.cpu_reason);
}

nlohmann::json cpu_start_json(const CpuWindowStart& cpu) {
    return {{"packages", cpu.holding.packages},
            {"whole_node", cpu.holding.whole_node},
            {"package_uj", optional_counters_json(cpu.package)},
            {"dram_uj", optional_counters_json(cpu.dram)},
            {"reason", cpu.reason}};
}

CpuWindowStart parse_cpu_start(const nlohmann::json& in) {
    CpuWindowStart cpu;
    cpu.holding.packages = in.at("packages").get<std::vector<unsigned>>();
    cpu.holding.whole_node = in.at("whole_node").get<bool>();
    if (!in.at("package_uj").is_null()) cpu.package = parse_counters<Microjoules>(in.at("package_uj"));
    if (!in.at("dram_uj").is_null()) cpu.dram = parse_counters<Microjoules>(in.at("dram_uj"));
    cpu.reason = in.at("reason").get<std::string>();
    return cpu;
}

// "; CPU packages 0,1: 300.000 J, DRAM: 40.000 J" for a step holding whole
// packages, or why they are not measured; nothing for other steps.
std::string cpu_words(const EnergyRecord& record) {
    const auto& packages = record.start.cpu.holding.packages;
    if (packages.empty()) return "";
    const std::string which = fmt::format("CPU package{} {}", packages.size() == 1 ? "" : "s", id_list_text(packages));
    if (!record.cpu_energy) return fmt::format("; {} not measured: {}", which, record.cpu_reason);
    std::string words = fmt::format("; {}: {:.3f} J", which, joules(total_of(*record.cpu_energy)));
    if (record.dram_energy) words += fmt::format(", DRAM: {:.3f} J", joules(total_of(*record.dram_energy)));
    return words;
}

}  // namespace

WindowStart failed_window(std::string reason) {
    WindowStart start;
    start.time = std::chrono::system_clock::now();
    start.reason = reason;
    start.cpu.reason = std::move(reason);
    return start;
}

namespace {

// The packages' counters at the start, when the step holds whole packages.
void begin_cpu(CpuWindowStart& cpu, const Connection& client) {
    cpu.reason = cpu.holding.reason;
    if (cpu.holding.packages.empty()) return;
    if (!client.ok()) {
        cpu.reason = not_measured_at("start", client.error());
        return;
    }
    auto reading = read_cpu_counters(**client, cpu.holding.packages, cpu.holding.whole_node);
    if (!reading.ok()) {
        cpu.reason = not_measured_at("start", reading.error());
        return;
    }
    cpu.package = std::move(reading->package);
    cpu.dram = std::move(reading->dram);
    cpu.reason = cpu.holding.whole_node ? reading->dram_reason
                                        : "DRAM not measured: the step holds only some of the node's CPU packages, "
                                          "and memory is shared across them";
}

void end_gpus(EnergyRecord& record, const Connection& client) {
    const WindowStart& start = record.start;
    auto end = client.ok() ? read_gpu_counters(**client, start.gpus.ids) : Result<Counters>(client.error());
    if (!end.ok()) {
        record.reason = not_measured_at("end", end.error());
    } else if (auto energy = subtract(*start.counters, *end, "GPU", kGpuCounterReset); energy.ok()) {
        record.energy = std::move(energy).value();
        record.reason.clear();
    } else {
        record.reason = energy.error().describe();
    }
}

void end_cpu(EnergyRecord& record, const Connection& client) {
    const CpuWindowStart& start = record.start.cpu;
    auto end = client.ok() ? read_cpu_counters(**client, start.holding.packages, start.dram.has_value())
                           : Result<CpuReading>(client.error());
    if (!end.ok()) {
        record.cpu_reason = not_measured_at("end", end.error());
        return;
    }
    auto package = subtract(*start.package, end->package, "CPU package", kCpuCounterReset);
    if (!package.ok()) {
        record.cpu_reason = package.error().describe();
        return;
    }
    record.cpu_energy = std::move(package).value();
    if (!start.dram) return;  // the start's reason says why
    if (!end->dram) {
        record.cpu_reason = end->dram_reason;
        return;
    }
    auto dram = subtract(*start.dram, *end->dram, "DRAM of CPU package", kCpuCounterReset);
    if (dram.ok()) {
        record.dram_energy = std::move(dram).value();
    } else {
        record.cpu_reason = "DRAM not measured: " + dram.error().describe();
    }
}

}  // namespace

WindowStart begin_window(const ZeusdConfig& zeusd, GpuSelection gpus, PackageHolding holding) {
    WindowStart start;
    start.gpus = std::move(gpus);
    start.cpu.holding = std::move(holding);
    if (start.gpus.ids.empty()) {
        start.time = std::chrono::system_clock::now();
        start.reason = "no GPUs were allocated to it on this node";
        start.cpu.reason = start.reason;
        start.no_gpus = true;
        return start;
    }
    const Connection client = ZeusdClient::connect(zeusd);
    auto counters = client.ok() ? read_gpu_counters(**client, start.gpus.ids) : Result<Counters>(client.error());
    start.time = std::chrono::system_clock::now();
    if (counters.ok()) {
        start.counters = std::move(counters).value();
    } else {
        start.reason = not_measured_at("start", counters.error());
    }
    begin_cpu(start.cpu, client);
    return start;
}

EnergyRecord end_window(const ZeusdConfig& zeusd, RecordIdentity identity, WindowStart start) {
    EnergyRecord record;
    record.identity = std::move(identity);
    record.start = std::move(start);
    record.reason = record.start.reason;
    record.cpu_reason = record.start.cpu.reason;
    const bool read_gpus = record.start.counters.has_value();
    const bool read_cpus = record.start.cpu.package.has_value();
    const Connection client =
        read_gpus || read_cpus ? ZeusdClient::connect(zeusd) : Connection(std::shared_ptr<ZeusdClient>());
    if (read_gpus) end_gpus(record, client);
    record.end = std::chrono::system_clock::now();
    if (read_cpus) end_cpu(record, client);
    return record;
}

std::string record_json(const EnergyRecord& record) {
    nlohmann::json out;
    out["schema"] = "zeus-slurm-record/1";
    out["job_id"] = record.identity.job_id;
    out["step"] = record.identity.step;
    out["node"] = record.identity.node;
    out["uid"] = record.identity.uid;
    out["gpus"] = record.start.gpus.ids;
    out["gpu_source"] =
        record.start.gpus.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(record.start.gpus.source);
    out["start"] = utc_text(record.start.time);
    out["end"] = utc_text(record.end);
    out["start_unix_s"] = unix_seconds(record.start.time);
    out["end_unix_s"] = unix_seconds(record.end);
    out["duration_s"] = std::chrono::duration<double>(record.end - record.start.time).count();
    if (record.energy) {
        nlohmann::json per_gpu = nlohmann::json::object();
        for (const auto& [id, value] : *record.energy) per_gpu[std::to_string(id)] = joules(value);
        out["gpu_energy_j"] = per_gpu;
        out["total_energy_j"] = joules(total_of(*record.energy));
        out["reason"] = nullptr;
    } else {
        out["gpu_energy_j"] = nullptr;
        out["total_energy_j"] = nullptr;
        out["reason"] = record.reason;
    }
    add_cpu_json(out, record);
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& task : record.tasks) {
        nlohmann::json entry{{"task", task.task_id}};
        if (task.exit_code) entry["exit_code"] = *task.exit_code;
        if (task.signal) entry["signal"] = *task.signal;
        tasks.push_back(entry);
    }
    out["tasks"] = tasks;
    return out.dump(2) + "\n";
}

std::string window_start_json(const WindowStart& start) {
    nlohmann::json out;
    out["start_unix_s"] = unix_seconds(start.time);
    out["gpus"] = start.gpus.ids;
    out["gpu_source"] = start.gpus.source;
    out["counters_mj"] = optional_counters_json(start.counters);
    out["reason"] = start.reason;
    out["cpu"] = cpu_start_json(start.cpu);
    return out.dump() + "\n";
}

Result<WindowStart> parse_window_start(const std::string& json) {
    try {
        const auto in = nlohmann::json::parse(json);
        WindowStart start;
        start.time = from_unix_seconds(in.at("start_unix_s").get<double>());
        start.gpus.ids = in.at("gpus").get<std::vector<unsigned>>();
        start.gpus.source = in.at("gpu_source").get<std::string>();
        start.reason = in.at("reason").get<std::string>();
        if (!in.at("counters_mj").is_null()) start.counters = parse_counters<Millijoules>(in.at("counters_mj"));
        if (in.contains("cpu")) {
            start.cpu = parse_cpu_start(in.at("cpu"));
        } else {
            start.cpu.reason = "the job's start record holds no CPU reading (written by an older plugin)";
        }
        return start;
    } catch (const std::exception& e) {
        return Error{ErrorCode::InvalidState, fmt::format("the job's start record is unreadable: {}", e.what()),
                     "it is written by the prolog; the job's record is lost, its steps' records are not", 0};
    }
}

std::string record_path(const std::string& spool, const RecordIdentity& identity) {
    return fmt::format("{}/job-{}/{}.{}.json", spool, identity.job_id, identity.step, identity.node);
}

std::string job_start_path(const std::string& spool, const RecordIdentity& identity) {
    return fmt::format("{}/job-{}/.job-start.{}.json", spool, identity.job_id, identity.node);
}

Status write_file_atomically(const std::string& path, const std::string& text) {
    const std::filesystem::path target(path);
    std::error_code ec;
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) {
        return Error{ErrorCode::OperatingSystem,
                     fmt::format("cannot create the spool folder {}: {}", target.parent_path().string(), ec.message()),
                     "create the spool directory writable by root (plugstack.conf option spool=)", 0};
    }
    const std::string temporary = fmt::format("{}.tmp.{}", path, ::getpid());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return Error{ErrorCode::OperatingSystem, fmt::format("cannot write {}: {}", temporary, std::strerror(errno)),
                     "make the spool directory writable by root", 0};
    }
    std::size_t written = 0;
    int problem = 0;
    while (written < text.size() && problem == 0) {
        const auto n = ::write(fd, text.data() + written, text.size() - written);
        if (n > 0) {
            written += static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EINTR) {
            problem = errno;
        }
    }
    if (problem == 0 && ::fsync(fd) != 0) problem = errno;
    ::close(fd);
    if (problem == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) problem = errno;
    if (problem != 0) {
        ::unlink(temporary.c_str());
        return Error{ErrorCode::OperatingSystem, fmt::format("cannot write {}: {}", path, std::strerror(problem)),
                     "free space in the spool directory's file system", 0};
    }
    return {};
}

std::string stderr_line(const EnergyRecord& record, const std::string& note) {
    const auto& identity = record.identity;
    if (!record.energy) {
        return fmt::format("zeus: {} on {}: GPU energy not measured: {}{} ({})\n", step_words(identity), identity.node,
                           record.reason, cpu_words(record), note);
    }
    const double seconds = std::chrono::duration<double>(record.end - record.start.time).count();
    return fmt::format("zeus: {} on {}: GPU{} {}: {:.3f} J in {:.2f} s{} ({})\n", step_words(identity), identity.node,
                       record.start.gpus.ids.size() == 1 ? "" : "s", id_list_text(record.start.gpus.ids),
                       joules(total_of(*record.energy)), seconds, cpu_words(record), note);
}

}  // namespace zeus::slurm
