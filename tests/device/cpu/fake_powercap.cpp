#include "fake_powercap.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace zeus::testing {
namespace fs = std::filesystem;

FakeTree::FakeTree() {
    std::string pattern = (fs::path(::testing::TempDir()) / "zeus-powercap-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    root_ = buffer.data();
    // Other users must reach it: permission tests read it as nobody.
    fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
}

FakeTree::~FakeTree() {
    std::error_code ec;
    // Restore permissions a test may have taken away, then remove everything.
    for (fs::recursive_directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(root_, ec);
}

fs::path FakeTree::dir(const fs::path& rel) const {
    const fs::path d = root_ / rel;
    fs::create_directories(d);
    return d;
}

void FakeTree::write(const fs::path& file, const std::string& content) const {
    const fs::path target = file.is_absolute() ? file : root_ / file;
    fs::create_directories(target.parent_path());
    const fs::path temp = target.parent_path() / (".tmp-" + target.filename().string());
    {
        std::ofstream out(temp, std::ios::trunc);
        out << content;
        if (!out) throw std::runtime_error("cannot write " + temp.string());
    }
    fs::permissions(temp, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
    fs::rename(temp, target);
}

fs::path FakePowercap::add_zone(unsigned n, const std::string& name, std::uint64_t energy_uj,
                                std::optional<std::uint64_t> max_energy_range_uj) {
    const fs::path zone = dir("intel-rapl:" + std::to_string(n));
    write(zone / "name", name + "\n");
    write(zone / "energy_uj", std::to_string(energy_uj) + "\n");
    if (max_energy_range_uj) write(zone / "max_energy_range_uj", std::to_string(*max_energy_range_uj) + "\n");
    return zone;
}

fs::path FakePowercap::add_subzone(unsigned n, unsigned m, std::uint64_t energy_uj,
                                   std::optional<std::uint64_t> max_energy_range_uj, const std::string& name) {
    const fs::path zone =
        dir(fs::path("intel-rapl:" + std::to_string(n)) / ("intel-rapl:" + std::to_string(n) + ":" + std::to_string(m)));
    write(zone / "name", name + "\n");
    write(zone / "energy_uj", std::to_string(energy_uj) + "\n");
    if (max_energy_range_uj) write(zone / "max_energy_range_uj", std::to_string(*max_energy_range_uj) + "\n");
    return zone;
}

void FakePowercap::set_energy(const fs::path& zone, std::uint64_t energy_uj) const {
    write(zone / "energy_uj", std::to_string(energy_uj) + "\n");
}

}  // namespace zeus::testing
