#include "zeus/optimizer/power_limit_profile.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "zeus/platform/read_user_file.hpp"
#include "zeus/monitor/replay_monitor.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::optimizer {
namespace {

constexpr std::string_view kWindowPrefix = "__GlobalPowerLimitOptimizer_";
constexpr const char* kProfileFix =
    "give a file saved by the power-limit optimizer: {\"measurements\": [{\"power_limit\": W, \"energy\": J, "
    "\"time\": s}, ...]}, or delete it to profile again";

Error bad_profile(const std::filesystem::path& path, const std::string& what) {
    return Error{ErrorCode::InvalidConfig, fmt::format("power-limit profile {}: {}", path.string(), what), kProfileFix,
                 0};
}

// Whole watts as integers (the original's format); other limits keep their milliwatts.
nlohmann::json limit_json(Milliwatts limit) {
    if (limit.count() % 1000 == 0) return limit.count() / 1000;
    return static_cast<double>(limit.count()) / 1000.0;
}

Result<double> positive_number(const std::filesystem::path& path, const nlohmann::json& entry, std::size_t index,
                               const char* key) {
    const auto it = entry.find(key);
    if (it == entry.end()) return bad_profile(path, fmt::format("measurements[{}] has no \"{}\"", index, key));
    if (!it->is_number()) {
        return bad_profile(path, fmt::format("measurements[{}].{} is {}, not a number", index, key, it->dump()));
    }
    const double value = it->get<double>();
    if (!(value > 0) || !std::isfinite(value)) {
        return bad_profile(path, fmt::format("measurements[{}].{} is {}; it must be positive", index, key, value));
    }
    return value;
}

}  // namespace

std::string power_limit_window_name(Milliwatts limit) {
    if (limit.count() % 1000 == 0) return fmt::format("{}{}", kWindowPrefix, limit.count() / 1000);
    return fmt::format("{}{:g}", kWindowPrefix, static_cast<double>(limit.count()) / 1000.0);
}

std::optional<Milliwatts> power_limit_from_window_name(std::string_view name) {
    if (!name.starts_with(kWindowPrefix)) return std::nullopt;
    const auto number = name.substr(kWindowPrefix.size());
    double watts = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), watts);
    if (ec != std::errc{} || ptr != number.data() + number.size() || !(watts > 0) || watts > 1e7) return std::nullopt;
    return Milliwatts(std::llround(watts * 1000.0));
}

Result<PowerLimitProfile> load_power_limit_profile(const std::filesystem::path& path) {
    auto text = read_user_file(path.string(), {"power-limit profile", "--profile (profile_path)"});
    if (!text) return text.error();
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
        return bad_profile(path, fmt::format("not JSON ({})", e.what()));
    }
    if (!doc.is_object() || !doc.contains("measurements") || !doc["measurements"].is_array()) {
        return bad_profile(path, "there is no \"measurements\" list");
    }
    PowerLimitProfile profile;
    std::size_t index = 0;
    for (const auto& entry : doc["measurements"]) {
        if (!entry.is_object()) return bad_profile(path, fmt::format("measurements[{}] is not an object", index));
        auto limit = positive_number(path, entry, index, "power_limit");
        if (!limit) return limit.error();
        auto energy = positive_number(path, entry, index, "energy");
        if (!energy) return energy.error();
        auto time = positive_number(path, entry, index, "time");
        if (!time) return time.error();
        profile.measurements.push_back(
            {Milliwatts(std::llround(*limit * 1000.0)), Joules(*energy), Seconds(*time)});
        ++index;
    }
    if (profile.measurements.empty()) return bad_profile(path, "the \"measurements\" list is empty");
    if (const auto steps = doc.find("profile_steps"); steps != doc.end()) {
        if (!steps->is_number_unsigned() || steps->get<std::size_t>() == 0) {
            return bad_profile(path, fmt::format("profile_steps is {}; it must be a positive integer", steps->dump()));
        }
        profile.profile_steps = steps->get<std::size_t>();
    }
    return profile;
}

Status save_power_limit_profile(const std::filesystem::path& path, const PowerLimitProfile& profile) {
    nlohmann::json doc;
    doc["measurements"] = nlohmann::json::array();
    for (const auto& m : profile.measurements) {
        doc["measurements"].push_back(
            {{"power_limit", limit_json(m.power_limit)}, {"energy", m.energy.count()}, {"time", m.time.count()}});
    }
    if (profile.profile_steps) doc["profile_steps"] = *profile.profile_steps;
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    const auto temporary = std::filesystem::path(path.string() + fmt::format(".tmp-{}", ::getpid()));
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << json_text(doc, 4) << '\n';
        out.flush();
        if (!out) {
            std::filesystem::remove(temporary, ec);
            return Error{ErrorCode::OperatingSystem,
                         fmt::format("cannot write the power-limit profile {}", temporary.string()),
                         "choose a profile_path in a writable directory with free space", 0};
        }
    }
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary, ec);
        return Error{ErrorCode::OperatingSystem,
                     fmt::format("cannot move the power-limit profile into place at {}: {}", path.string(),
                                 ec.message()),
                     "choose a profile_path in a writable directory", 0};
    }
    return {};
}

Result<LoggedPowerLimitProfile> read_power_limit_log(const std::filesystem::path& path) {
    auto log = read_window_log(path);
    if (!log) return log.error();
    if (log->gpu_indices.empty()) {
        return Error{ErrorCode::NoData,
                     fmt::format("window log {} has no GPU energy columns (gpu<index>_energy after elapsed_time): "
                                 "there is no GPU energy to choose a power limit by",
                                 path.string()),
                     "give the log_file of a monitor that measured the GPUs the optimizer profiled", 0};
    }
    LoggedPowerLimitProfile profile;
    profile.gpu_count = log->gpu_indices.size();
    for (const auto& window : log->windows) {
        const auto limit = power_limit_from_window_name(window.name);
        if (!limit) continue;  // the log may hold the program's own windows too
        double energy = 0;
        for (const auto& e : window.gpu_energy) energy += e.count();
        profile.measurements.push_back({*limit, Joules(energy), window.elapsed});
    }
    if (profile.measurements.empty()) {
        return Error{ErrorCode::NoData,
                     fmt::format("window log {} has no power-limit optimizer windows ({}<W>)", path.string(),
                                 kWindowPrefix),
                     "give the log_file of a monitor the power-limit optimizer profiled with", 0};
    }
    return profile;
}

}  // namespace zeus::optimizer
