// Rail discovery and naming on both sysfs layouts, through the public API.
#include <gtest/gtest.h>

#include "fake_jetson.hpp"

namespace zeus::test {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> names(const std::vector<SocRail>& rails) {
    std::vector<std::string> out;
    for (const auto& r : rails) out.push_back(r.name);
    return out;
}

TEST(JetsonDiscovery, HwmonLayoutWithLabelsVoltagesAndCurrents) {
    FakeJetson fake;  // Orin Nano: one INA3221; AGX Orin's second one has NC channels
    const auto dir = fake.hwmon("1-0040", 3);
    FakeJetson::hwmon_rail(dir, 1, "VDD_IN", 5000, 1200);          // 6 W
    FakeJetson::hwmon_rail(dir, 2, "VDD_CPU_GPU_CV", 5000, 400);   // 2 W
    FakeJetson::hwmon_rail(dir, 3, "VDD_SOC", 5000, 300);          // 1.5 W
    const auto second = fake.hwmon("1-0041", 4);
    FakeJetson::hwmon_rail(second, 1, "NC", 0, 0);
    FakeJetson::write(second / "in2_label", "VDD_GPU\n");
    FakeJetson::write(second / "power2_input", "3500000\n");      // hwmon power is µW: 3.5 W

    auto soc = open_fake(fake);
    ASSERT_TRUE(soc->available()) << soc->status().error().describe();
    EXPECT_EQ(soc->name(), "NVIDIA Jetson");
    EXPECT_EQ(soc->energy_source(), SocEnergySource::IntegratedPower);
    const auto rails = soc->rails();
    EXPECT_EQ(names(rails), (std::vector<std::string>{"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC", "VDD_GPU"}));

    const auto in = find_rail(rails, "VDD_IN");
    EXPECT_EQ(in->metric, SocMetric::Total);
    EXPECT_NEAR(in->power->count(), 6.0, 1e-9);
    EXPECT_NE(in->source.find("in1_input (mV) x "), std::string::npos) << in->source;
    EXPECT_NE(in->source.find("curr1_input (mA)"), std::string::npos) << in->source;
    EXPECT_TRUE(in->status.ok());
    EXPECT_EQ(find_rail(rails, "VDD_CPU_GPU_CV")->metric, SocMetric::Cpu);
    EXPECT_EQ(find_rail(rails, "VDD_SOC")->metric, std::nullopt);
    const auto gpu = find_rail(rails, "VDD_GPU");
    EXPECT_EQ(gpu->metric, SocMetric::Gpu);
    EXPECT_NEAR(gpu->power->count(), 3.5, 1e-9);
    EXPECT_NE(gpu->source.find("power2_input (µW)"), std::string::npos) << gpu->source;

    EXPECT_EQ(soc->available_metrics(), (std::vector<SocMetric>{SocMetric::Cpu, SocMetric::Gpu, SocMetric::Total}));
    for (const auto& m : soc->metrics()) ASSERT_EQ(m.rails.size(), 1U) << to_string(m.metric);
}

TEST(JetsonDiscovery, IioLayoutWithRailNamesPowerAndVoltageCurrent) {
    FakeJetson fake;  // Nano / TX2 style, driver ina3221x
    const auto dir = fake.iio("6-0040", 0);
    FakeJetson::iio_rail_power(dir, 0, "POM_5V_IN", 4200);
    FakeJetson::iio_rail_vi(dir, 1, "POM_5V_GPU", 5000, 300);  // 1.5 W
    FakeJetson::iio_rail_power(dir, 2, "POM_5V_CPU", 900);

    auto soc = open_fake(fake);
    ASSERT_TRUE(soc->available());
    const auto rails = soc->rails();
    EXPECT_EQ(names(rails), (std::vector<std::string>{"POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"}));
    EXPECT_EQ(find_rail(rails, "POM_5V_IN")->metric, SocMetric::Total);
    EXPECT_NEAR(find_rail(rails, "POM_5V_IN")->power->count(), 4.2, 1e-9);
    EXPECT_NE(find_rail(rails, "POM_5V_IN")->source.find("in_power0_input (mW)"), std::string::npos);
    EXPECT_EQ(find_rail(rails, "POM_5V_GPU")->metric, SocMetric::Gpu);
    EXPECT_NEAR(find_rail(rails, "POM_5V_GPU")->power->count(), 1.5, 1e-9);
    EXPECT_NE(find_rail(rails, "POM_5V_GPU")->source.find("in_voltage1_input (mV) x"), std::string::npos);
    EXPECT_EQ(find_rail(rails, "POM_5V_CPU")->metric, SocMetric::Cpu);
    EXPECT_NEAR(find_rail(rails, "POM_5V_CPU")->power->count(), 0.9, 1e-9);
}

TEST(JetsonDiscovery, ChannelsAreOrderedNumerically) {
    FakeJetson fake;
    const auto dir = fake.iio("6-0040", 0);
    FakeJetson::iio_rail_power(dir, 10, "VDD_SYS_GPU", 1000);
    FakeJetson::iio_rail_power(dir, 2, "VDD_SYS_CPU", 1000);
    auto soc = open_fake(fake);
    EXPECT_EQ(names(soc->rails()), (std::vector<std::string>{"VDD_SYS_CPU", "VDD_SYS_GPU"}));
}

TEST(JetsonDiscovery, MetricWithoutARailSaysWhichNamesItLookedFor) {
    FakeJetson fake;
    const auto dir = fake.iio("6-0040", 0);
    FakeJetson::iio_rail_power(dir, 0, "VDD_SYS_GPU", 1000);
    auto soc = open_fake(fake);
    EXPECT_EQ(soc->available_metrics(), std::vector<SocMetric>{SocMetric::Gpu});
    for (const auto& m : soc->metrics()) {
        if (m.metric != SocMetric::Cpu) continue;
        EXPECT_FALSE(m.support.supported);
        EXPECT_NE(m.support.reason.find("\"cpu\""), std::string::npos) << m.support.reason;
        EXPECT_NE(m.support.reason.find("VDD_SYS_GPU"), std::string::npos) << m.support.reason;
    }
    auto energy = soc->total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_FALSE(energy->metric(SocMetric::Cpu).ok());
    EXPECT_TRUE(energy->metric(SocMetric::Gpu).ok());
}

TEST(JetsonDiscovery, RailWithoutValueFilesIsListedWithTheFix) {
    FakeJetson fake;
    const auto dir = fake.iio("6-0040", 0);
    FakeJetson::iio_rail_power(dir, 0, "VDD_IN", 3000);
    FakeJetson::write(dir / "rail_name_1", "VDD_GPU\n");  // no in_power1/in_voltage1/in_current1
    auto soc = open_fake(fake);
    ASSERT_TRUE(soc->available());  // VDD_IN still reads
    const auto gpu = find_rail(soc->rails(), "VDD_GPU");
    ASSERT_TRUE(gpu.has_value());
    ASSERT_FALSE(gpu->status.ok());
    EXPECT_NE(gpu->status.error().message.find("in_power1_input"), std::string::npos);
    EXPECT_NE(gpu->status.error().hint.find("ls "), std::string::npos);
    for (const auto& m : soc->metrics()) {
        if (m.metric == SocMetric::Gpu) {
            EXPECT_FALSE(m.support.supported);
            EXPECT_TRUE(m.support.definitive);
        }
    }
    EXPECT_FALSE(soc->total_energy()->metric(SocMetric::Gpu).ok());
}

}  // namespace
}  // namespace zeus::test
