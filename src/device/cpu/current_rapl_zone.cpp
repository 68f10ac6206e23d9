#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <sstream>

#include "device/cpu/powercap.hpp"
#include "device/cpu/sysfs_file.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus {
namespace {

// Field 39 ("processor": the CPU the task last ran on) of /proc/<pid>/stat.
// The command name (field 2) is in parentheses and may hold spaces and ")",
// so fields are counted from after the last ')': field 3 is the first there.
Result<unsigned> last_cpu(const std::string& stat_path) {
    auto stat = rapl::read_text_file(stat_path);
    if (!stat) {
        Error e = stat.error();
        if (e.code == ErrorCode::NotFound) e.hint = "check that the process exists (the pid may have exited)";
        return e;
    }
    const auto paren = stat->rfind(')');
    if (paren == std::string::npos) {
        return Error{ErrorCode::InvalidState, fmt::format("{} is not in the /proc/<pid>/stat format", stat_path), "", 0};
    }
    std::istringstream fields(stat->substr(paren + 1));
    std::string field;
    constexpr int kProcessorField = 39;
    for (int n = 3; n <= kProcessorField; ++n) {
        if (!(fields >> field)) {
            return Error{ErrorCode::InvalidState,
                         fmt::format("{} has {} fields, fewer than the {} that hold the CPU number", stat_path, n - 1,
                                     kProcessorField),
                         "", 0};
        }
    }
    unsigned cpu = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), cpu);
    if (ec != std::errc{} || end != field.data() + field.size()) {
        return Error{ErrorCode::InvalidState, fmt::format("field 39 of {} is \"{}\", not a CPU number", stat_path, field),
                     "", 0};
    }
    return cpu;
}

}  // namespace

Result<unsigned> current_rapl_zone(std::optional<pid_t> pid, const CpuOptions& options) {
    namespace fs = std::filesystem;
    const std::string process = pid ? std::to_string(*pid) : "self";
    auto cpu = last_cpu((fs::path(options.proc_root) / process / "stat").string());
    if (!cpu) return cpu.error();

    const fs::path topology = fs::path(options.cpu_sysfs_root) / fmt::format("cpu{}", *cpu) / "topology";
    auto package = rapl::read_i64_file((topology / "physical_package_id").string());
    if (!package) return package.error();
    // die_id exists since Linux 5.3; multi-die parts name zones package-P-die-D.
    std::optional<std::int64_t> die;
    if (auto d = rapl::read_i64_file((topology / "die_id").string())) die = *d;

    auto root = rapl::find_powercap_root(options);
    if (!root) return root.error();
    const std::string package_name = fmt::format("package-{}", *package);
    const std::string die_name = die ? fmt::format("package-{}-die-{}", *package, *die) : std::string{};
    std::optional<unsigned> package_match;
    for (const auto& zone : rapl::package_zone_dirs(*root)) {
        auto name = rapl::read_trimmed((fs::path(zone.path) / "name").string());
        if (!name) continue;
        if (die && *name == die_name) return zone.index;
        if (*name == package_name && !package_match) package_match = zone.index;
    }
    if (package_match) return *package_match;
    return Error{ErrorCode::NotSupported,
                 fmt::format("no RAPL zone under {} is named {}{} (the package of CPU {}, where {} last ran)", *root,
                             die ? die_name + " or " : "", package_name, *cpu,
                             pid ? fmt::format("process {}", *pid) : std::string("this process")),
                 "RAPL may not cover this package (virtual machine, or a platform-only powercap tree)", 0};
}

}  // namespace zeus
