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

Result<Counters> read_counters(const ZeusdConfig& zeusd, const std::vector<unsigned>& ids) {
    auto client = ZeusdClient::connect(zeusd);
    if (!client.ok()) return client.error();
    ZeusdRequirements needs;
    needs.read_gpu = true;
    needs.gpu_ids = ids;
    if (auto allowed = (*client)->require(needs); !allowed.ok()) return allowed.error();
    return (*client)->gpu_energy(ids);
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

double joules(Millijoules energy) { return static_cast<double>(energy.count()) / 1000.0; }

Millijoules total_of(const Counters& energy) {
    Millijoules total{0};
    for (const auto& [id, value] : energy) total += value;
    return total;
}

// The energy of each GPU between the two readings, or why there is none.
Result<Counters> subtract(const Counters& start, const Counters& end) {
    Counters energy;
    for (const auto& [id, begin] : start) {
        const auto found = end.find(id);
        if (found == end.end()) {
            return Error{ErrorCode::NoData, fmt::format("zeusd gave no end reading for GPU {}", id), "", 0};
        }
        if (found->second < begin) {
            return Error{ErrorCode::InvalidState,
                         fmt::format("GPU {}'s energy counter went back during the job ({} mJ, then {} mJ)", id,
                                     begin.count(), found->second.count()),
                         "the driver was reloaded or the GPU reset; the energy of this window is unknown", 0};
        }
        energy[id] = found->second - begin;
    }
    return energy;
}

nlohmann::json counters_json(const Counters& counters) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [id, value] : counters) out[std::to_string(id)] = value.count();
    return out;
}

std::string gpu_list_text(const std::vector<unsigned>& ids) { return fmt::format("{}", fmt::join(ids, ",")); }

std::string step_words(const RecordIdentity& identity) {
    if (identity.step == "job") return fmt::format("job {}", identity.job_id);
    return fmt::format("job {} step {}", identity.job_id, identity.step);
}

}  // namespace

WindowStart failed_window(std::string reason) {
    WindowStart start;
    start.time = std::chrono::system_clock::now();
    start.reason = std::move(reason);
    return start;
}

WindowStart begin_window(const ZeusdConfig& zeusd, GpuSelection gpus) {
    WindowStart start;
    start.gpus = std::move(gpus);
    if (start.gpus.ids.empty()) {
        start.time = std::chrono::system_clock::now();
        start.reason = "no GPUs were allocated to it on this node";
        start.no_gpus = true;
        return start;
    }
    auto counters = read_counters(zeusd, start.gpus.ids);
    start.time = std::chrono::system_clock::now();
    if (counters.ok()) {
        start.counters = std::move(counters).value();
    } else {
        start.reason = fmt::format("no reading at its start: {}", counters.error().describe());
    }
    return start;
}

EnergyRecord end_window(const ZeusdConfig& zeusd, RecordIdentity identity, WindowStart start) {
    EnergyRecord record;
    record.identity = std::move(identity);
    if (!start.counters) {
        record.end = std::chrono::system_clock::now();
        record.reason = start.reason;
        record.start = std::move(start);
        return record;
    }
    auto end = read_counters(zeusd, start.gpus.ids);
    record.end = std::chrono::system_clock::now();
    if (!end.ok()) {
        record.reason = fmt::format("no reading at its end: {}", end.error().describe());
    } else if (auto energy = subtract(*start.counters, *end); energy.ok()) {
        record.energy = std::move(energy).value();
    } else {
        record.reason = energy.error().describe();
    }
    record.start = std::move(start);
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
    out["counters_mj"] = start.counters ? counters_json(*start.counters) : nlohmann::json(nullptr);
    out["reason"] = start.reason;
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
        if (!in.at("counters_mj").is_null()) {
            Counters counters;
            for (const auto& [id, value] : in.at("counters_mj").items()) {
                counters[static_cast<unsigned>(std::stoul(id))] = Millijoules(value.get<std::int64_t>());
            }
            start.counters = std::move(counters);
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
        return fmt::format("zeus: {} on {}: GPU energy not measured: {} ({})\n", step_words(identity), identity.node,
                           record.reason, note);
    }
    const double seconds = std::chrono::duration<double>(record.end - record.start.time).count();
    return fmt::format("zeus: {} on {}: GPU{} {}: {:.3f} J in {:.2f} s ({})\n", step_words(identity), identity.node,
                       record.start.gpus.ids.size() == 1 ? "" : "s", gpu_list_text(record.start.gpus.ids),
                       joules(total_of(*record.energy)), seconds, note);
}

}  // namespace zeus::slurm
