// Detection (what open_soc says when there is no Jetson, and why), options,
// and unreadable rails: explicit errors naming the file, never 0.
#include <sys/utsname.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "fake_jetson.hpp"

namespace zeus::test {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

void one_rail(FakeJetson& fake) { FakeJetson::iio_rail_power(fake.iio("6-0040"), 0, "VDD_IN", 1000); }

TEST(SocOpen, MissingTreeIsUnavailableWithTheReason) {
    FakeJetson fake;
    std::filesystem::create_directories(fake.sys());
    auto soc = open_soc(fake.options());
    ASSERT_TRUE(soc.ok());
    EXPECT_FALSE((*soc)->available());
    EXPECT_EQ((*soc)->name(), "none");
    const Error e = (*soc)->status().error();
    EXPECT_EQ(e.code, ErrorCode::NotFound);
    EXPECT_TRUE(contains(e.message, "bus/i2c/drivers/ina3221x")) << e.message;
    EXPECT_TRUE(contains(e.message, "bus/i2c/drivers/ina3221")) << e.message;
    EXPECT_TRUE(contains(e.hint, "ZEUS_JETSON_SYSFS_ROOT")) << e.hint;
    EXPECT_FALSE((*soc)->total_energy().ok());
    EXPECT_TRUE((*soc)->metrics().empty());
    EXPECT_TRUE((*soc)->rails().empty());
}

TEST(SocOpen, NotAarch64IsUnavailable) {
    FakeJetson fake;
    one_rail(fake);
    SocOptions o = fake.options();
    o.machine = "x86_64";
    auto soc = open_soc(o).value();
    EXPECT_FALSE(soc->available());
    EXPECT_TRUE(contains(soc->status().error().message, "aarch64"));
    EXPECT_EQ(soc->status().error().code, ErrorCode::NotSupported);
}

TEST(SocOpen, NoTegraReleaseFileIsUnavailable) {
    FakeJetson fake;
    one_rail(fake);
    SocOptions o = fake.options();
    o.machine = "aarch64";
    o.platform_root = fake.root().string();
    auto soc = open_soc(o).value();
    EXPECT_FALSE(soc->available());
    EXPECT_TRUE(contains(soc->status().error().message, "etc/nv_tegra_release"));
    EXPECT_TRUE(contains(soc->status().error().message, "usr/lib/aarch64-linux-gnu/tegra"));

    // Either marker is enough.
    FakeJetson::write(fake.root() / "etc/nv_tegra_release", "# R36 (release), REVISION: 4.3\n");
    EXPECT_TRUE(open_soc(o).value()->available());
}

TEST(SocOpen, TegraLibraryFolderAlsoMarksAJetson) {
    FakeJetson fake;
    one_rail(fake);
    std::filesystem::create_directories(fake.root() / "usr/lib/aarch64-linux-gnu/tegra");
    SocOptions o = fake.options();
    o.machine = "aarch64";
    o.platform_root = fake.root().string();
    EXPECT_TRUE(open_soc(o).value()->available());
}

TEST(SocOpen, DefaultOptionsOnThisMachine) {
    utsname u{};
    ASSERT_EQ(::uname(&u), 0);
    if (std::string(u.machine) == "aarch64") GTEST_SKIP() << "may be a real Jetson";
    auto soc = open_soc(SocOptions{}).value();
    EXPECT_FALSE(soc->available());
    EXPECT_TRUE(contains(soc->status().error().message, u.machine));
}

TEST(SocOpen, SamplePeriodOutOfRangeIsAnError) {
    FakeJetson fake;
    one_rail(fake);
    for (auto period : {0ms, 10'001ms}) {
        auto soc = open_soc(fake.options(period));
        ASSERT_FALSE(soc.ok());
        EXPECT_EQ(soc.error().code, ErrorCode::InvalidArgument);
        EXPECT_TRUE(contains(soc.error().message, "sample_period"));
    }
}

TEST(SocOptionsEnvironment, ReadsAndValidatesTheSysfsRoot) {
    FakeJetson fake;
    ::unsetenv("ZEUS_JETSON_SYSFS_ROOT");
    EXPECT_FALSE(SocOptions::from_environment().value().sysfs_root.has_value());
    ::setenv("ZEUS_JETSON_SYSFS_ROOT", "", 1);  // empty is unset
    EXPECT_FALSE(SocOptions::from_environment().value().sysfs_root.has_value());
    ::setenv("ZEUS_JETSON_SYSFS_ROOT", fake.root().c_str(), 1);
    EXPECT_EQ(SocOptions::from_environment().value().sysfs_root, fake.root().string());
    ::setenv("ZEUS_JETSON_SYSFS_ROOT", (fake.root() / "nope").c_str(), 1);
    auto bad = SocOptions::from_environment();
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ErrorCode::InvalidConfig);
    EXPECT_TRUE(contains(bad.error().message, "ZEUS_JETSON_SYSFS_ROOT"));
    EXPECT_TRUE(contains(bad.error().message, "nope"));
    ::unsetenv("ZEUS_JETSON_SYSFS_ROOT");
}

// A rail whose value file holds `content` next to a good one.
struct BadRail {
    FakeJetson fake;
    std::filesystem::path bad_file;
    std::unique_ptr<Soc> soc;

    explicit BadRail(std::string_view content) {
        const auto dir = fake.iio("6-0040");
        FakeJetson::iio_rail_power(dir, 0, "VDD_IN", 3000);
        FakeJetson::iio_rail_power(dir, 1, "VDD_GPU", 1000);
        bad_file = dir / "in_power1_input";
        FakeJetson::write(bad_file, content);
        soc = open_fake(fake);
    }
    [[nodiscard]] Error gpu_error() const {
        auto energy = soc->total_energy();  // reads every rail now
        EXPECT_TRUE(energy.ok());
        EXPECT_TRUE(energy->metric(SocMetric::Total).ok());  // the good rail is unaffected
        const auto rail = find_rail(soc->rails(), "VDD_GPU");
        EXPECT_FALSE(rail->status.ok());
        EXPECT_FALSE(rail->power.has_value());  // no stale power next to an error
        auto gpu = energy->metric(SocMetric::Gpu);
        EXPECT_FALSE(gpu.ok());
        if (gpu.ok()) return {};
        // As discovered: through the driver folder's link to the device.
        EXPECT_TRUE(contains(gpu.error().message, "ina3221x/6-0040/iio:device0/in_power1_input"))
            << gpu.error().message;
        EXPECT_TRUE(contains(gpu.error().message, "VDD_GPU")) << gpu.error().message;
        EXPECT_FALSE(gpu.error().hint.empty());
        return gpu.error();
    }
};

TEST(UnreadableRail, MalformedValueNamesTheFileAndTheContent) {
    BadRail r("12abc\n");
    const Error e = r.gpu_error();
    EXPECT_EQ(e.code, ErrorCode::InvalidState);
    EXPECT_TRUE(contains(e.message, "\"12abc\", not a number")) << e.message;
    EXPECT_TRUE(r.soc->available());
    EXPECT_EQ(r.soc->available_metrics(), std::vector<SocMetric>{SocMetric::Total});
    for (const auto& m : r.soc->metrics()) {
        if (m.metric != SocMetric::Gpu) continue;
        EXPECT_FALSE(m.support.supported);
        EXPECT_FALSE(m.support.definitive);  // reads keep trying
        EXPECT_TRUE(contains(m.support.reason, "in_power1_input")) << m.support.reason;
    }
}

TEST(UnreadableRail, EmptyAndNonFiniteValuesAreErrors) {
    EXPECT_EQ(BadRail("\n").gpu_error().code, ErrorCode::NoData);
    EXPECT_EQ(BadRail("nan\n").gpu_error().code, ErrorCode::InvalidState);
    EXPECT_EQ(BadRail("inf\n").gpu_error().code, ErrorCode::InvalidState);
}

TEST(UnreadableRail, ValueThatCannotBeReadIsAnOperatingSystemError) {
    BadRail r("1000\n");
    std::filesystem::remove(r.bad_file);
    std::filesystem::create_directory(r.bad_file);  // read() fails with EISDIR
    const Error e = r.gpu_error();
    EXPECT_EQ(e.code, ErrorCode::OperatingSystem);
    EXPECT_TRUE(contains(e.hint, "dmesg")) << e.hint;
}

TEST(UnreadableRail, VanishedFileIsNotFoundAndTheRailRecovers) {
    BadRail r("1000\n");
    ASSERT_TRUE(r.soc->total_energy()->metric(SocMetric::Gpu).ok());
    std::filesystem::remove(r.bad_file);
    const Error e = r.gpu_error();
    EXPECT_EQ(e.code, ErrorCode::NotFound);
    EXPECT_TRUE(contains(e.hint, "reopen")) << e.hint;

    FakeJetson::write(r.bad_file, "1000\n");
    auto energy = r.soc->total_energy();
    ASSERT_TRUE(energy->metric(SocMetric::Gpu).ok());
    const auto rail = find_rail(r.soc->rails(), "VDD_GPU");
    EXPECT_TRUE(rail->status.ok());
    EXPECT_GE(rail->stats.failed_reads, 1U);
    EXPECT_EQ(r.soc->available_metrics(), (std::vector<SocMetric>{SocMetric::Gpu, SocMetric::Total}));
}

TEST(UnreadableRail, NoReadableRailAtAllMakesTheSocUnavailable) {
    FakeJetson fake;
    const auto dir = fake.iio("6-0040");
    FakeJetson::iio_rail_power(dir, 0, "VDD_IN", 0);
    FakeJetson::write(dir / "in_power0_input", "garbage\n");
    auto soc = open_fake(fake);
    ASSERT_FALSE(soc->available());
    EXPECT_EQ(soc->name(), "NVIDIA Jetson");  // still lists its rails for show-env
    EXPECT_TRUE(contains(soc->status().error().message, "none of the 1 INA3221 rails"));
    EXPECT_TRUE(contains(soc->status().error().message, "in_power0_input"));
    EXPECT_EQ(soc->rails().size(), 1U);
    EXPECT_FALSE(soc->total_energy().ok());
}

}  // namespace
}  // namespace zeus::test
