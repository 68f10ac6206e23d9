// Permission denied on energy_uj (the kernel's default since CVE-2020-8694)
// must be an error naming the file and the fixes, never a zero.
//
// Tests run as root here, and root reads any file whatever its mode, so the
// check runs in a forked child that drops to nobody (65534) first: the real
// open(2) then fails with EACCES exactly as it does for a user on a real
// machine, with no test seam in the product. Run as a normal user, the child
// keeps its identity and a 0000 mode stops it.
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "fake_powercap.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using testing::FakePowercap;

constexpr int kCannotDrop = 77;
constexpr uid_t kNobody = 65534;

// What the child saw, one item per line.
struct Seen {
    std::string lines;
    int exit_code = -1;
};

template <class Fn>
Seen in_unprivileged_child(Fn fn) {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) {
            ::_exit(kCannotDrop);
        }
        const std::string out = fn();
        ssize_t written = 0;
        while (written < static_cast<ssize_t>(out.size())) {
            const ssize_t n = ::write(fds[1], out.data() + written, out.size() - static_cast<std::size_t>(written));
            if (n <= 0) break;
            written += n;
        }
        ::_exit(0);  // no atexit handlers or leak checks of the parent's state
    }
    ::close(fds[1]);
    Seen seen;
    char buffer[512];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) seen.lines.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    seen.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return seen;
}

std::string line_of(const Error& e) {
    return std::string(to_string(e.code)) + "\t" + e.message + "\t" + e.hint + "\n";
}

void make_root_only(const fs::path& file) {
    // The kernel's mode is 0400 owned by root; as a normal user, 0000.
    fs::permissions(file, ::geteuid() == 0 ? fs::perms::owner_read : fs::perms::none);
}

TEST(CpuPermissions, UnreadableCounterIsAnErrorWithTheFixes) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 123'456, 262'143'328'850);
    const auto dram = tree.add_subzone(0, 1, 1'000, 65'532'610'987);
    make_root_only(zone / "energy_uj");
    make_root_only(dram / "energy_uj");

    const Seen seen = in_unprivileged_child([&] {
        CpuOptions options;
        options.powercap_root = tree.root().string();
        Cpus cpus = Cpus::open(options);
        std::ostringstream out;
        out << cpus.size() << "\n" << cpus.status().ok() << "\n" << cpus.warnings().size() << "\n";
        if (cpus.empty()) return out.str();
        const Cpu& cpu = cpus[0];
        out << (cpu.status().ok() ? std::string("ok\n") : line_of(cpu.status().error()));
        auto total = cpu.total_energy();
        out << (total.ok() ? "total " + std::to_string(total->package.count()) + "\n" : line_of(total.error()));
        auto dram_energy = cpu.dram_energy();
        out << (dram_energy.ok() ? std::string("dram ok\n") : line_of(dram_energy.error()));
        return out.str();
    });
    if (seen.exit_code == kCannotDrop) GTEST_SKIP() << "cannot drop root privileges here (no setuid)";
    ASSERT_EQ(seen.exit_code, 0);

    std::istringstream in(seen.lines);
    std::string size, status_ok, warnings, package, total, dram_line;
    std::getline(in, size);
    std::getline(in, status_ok);
    std::getline(in, warnings);
    std::getline(in, package);
    std::getline(in, total);
    std::getline(in, dram_line);
    ASSERT_EQ(size, "1") << seen.lines;
    EXPECT_EQ(status_ok, "1") << "the zone was found; its CPU carries the error";
    EXPECT_EQ(warnings, "2") << "one actionable line per unreadable counter";

    const std::string energy_file = (zone / "energy_uj").string();
    EXPECT_EQ(package.rfind("no permission\t", 0), 0U) << package;
    EXPECT_NE(package.find(energy_file), std::string::npos) << package;
    EXPECT_NE(package.find("mode 0"), std::string::npos) << "the mode bits help pick a fix: " << package;
    EXPECT_NE(package.find("CVE-2020-8694"), std::string::npos) << package;
    for (const char* fix : {"zeusd", "packaging/udev/99-zeus-rapl.rules", "packaging/tmpfiles.d/zeus-rapl.conf",
                            "run as root"}) {
        EXPECT_NE(package.find(fix), std::string::npos) << "missing fix '" << fix << "' in: " << package;
    }
    EXPECT_EQ(total.rfind("no permission\t", 0), 0U) << "never a zero: " << total;
    EXPECT_EQ(dram_line.rfind("no permission\t", 0), 0U) << dram_line;
    EXPECT_NE(dram_line.find((dram / "energy_uj").string()), std::string::npos) << dram_line;
}

TEST(CpuPermissions, NobodyCanReadWhatTheShippedRulesOpenUp) {
    // The udev/tmpfiles rules make energy_uj 0440 for group zeus; with the
    // mode opened to others as well, the same child reads real numbers.
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 123'456, 262'143'328'850);
    fs::permissions(zone / "energy_uj", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    const Seen seen = in_unprivileged_child([&] {
        CpuOptions options;
        options.powercap_root = tree.root().string();
        Cpus cpus = Cpus::open(options);
        if (cpus.empty() || !cpus[0].available()) return std::string("unavailable\n");
        auto total = cpus[0].total_energy();
        return total.ok() ? std::string("ok\n") : line_of(total.error());
    });
    if (seen.exit_code == kCannotDrop) GTEST_SKIP() << "cannot drop root privileges here (no setuid)";
    EXPECT_EQ(seen.lines, "ok\n");
}

}  // namespace
}  // namespace zeus
