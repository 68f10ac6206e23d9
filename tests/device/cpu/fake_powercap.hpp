// Generated powercap trees for tests: a temporary directory laid out as the
// kernel lays out /sys/class/powercap, whose files the test rewrites between
// reads to play a RAPL counter (wraps, resets, glitches, unreadable files).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace zeus::testing {

class FakeTree {
  public:
    FakeTree();  // a fresh directory under the test temp dir, readable by every user
    FakeTree(const FakeTree&) = delete;
    FakeTree& operator=(const FakeTree&) = delete;
    ~FakeTree();

    [[nodiscard]] const std::filesystem::path& root() const { return root_; }

    // <root>/<rel>/... with the content written atomically (write + rename),
    // so a concurrent reader (the sampler thread) sees the old or the new
    // value, never a half-written one.
    void write(const std::filesystem::path& file, const std::string& content) const;
    [[nodiscard]] std::filesystem::path dir(const std::filesystem::path& rel) const;

  private:
    std::filesystem::path root_;
};

// A powercap tree with RAPL zones.
class FakePowercap : public FakeTree {
  public:
    // intel-rapl:N/{name, energy_uj, max_energy_range_uj}; max nullopt leaves
    // the range file out. Returns the zone directory.
    std::filesystem::path add_zone(unsigned n, const std::string& name, std::uint64_t energy_uj,
                                   std::optional<std::uint64_t> max_energy_range_uj);
    // intel-rapl:N/intel-rapl:N:M with name `name` (default dram).
    std::filesystem::path add_subzone(unsigned n, unsigned m, std::uint64_t energy_uj,
                                      std::optional<std::uint64_t> max_energy_range_uj,
                                      const std::string& name = "dram");
    // Rewrites a zone's energy_uj.
    void set_energy(const std::filesystem::path& zone, std::uint64_t energy_uj) const;
};

}  // namespace zeus::testing
