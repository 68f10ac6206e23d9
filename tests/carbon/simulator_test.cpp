// CarbonEmissionMonitor on the GPU simulator's virtual clock: a window that
// crosses a UTC hour boundary with a load step at the boundary. The expected
// emission is the simulator's ground-truth energy before and after the
// boundary times the recorded intensities of those hours (served from
// loopback, shifted to the simulator's hours).
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include "support/sim_fixture.hpp"
#include "replay_server.hpp"
#include "zeus/carbon/carbon_emission_monitor.hpp"
#include "zeus/carbon/electricity_maps.hpp"

namespace zeus::carbon {
namespace {

using namespace std::chrono_literals;
using testing::Query;

constexpr double kJoulesPerKwh = 3.6e6;

class CarbonOnVirtualClock : public zeus::testing::SimulatedGpus {
  protected:
    static std::chrono::system_clock::time_point sim_now() {
        long long us = 0;
        EXPECT_EQ(zeusSimUnixTimeUs(&us), ZEUS_SIM_OK) << zeusSimLastError();
        return std::chrono::system_clock::time_point(std::chrono::microseconds(us));
    }
    // Moves the virtual clock to `t` exactly.
    static void advance_to(std::chrono::system_clock::time_point t) {
        advance(std::chrono::duration<double>(t - sim_now()).count());
    }
};

TEST_F(CarbonOnVirtualClock, EmissionIsGroundTruthEnergyPerHourTimesThatHoursIntensity) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 1U);

    const UtcTime boundary = hour_floor(sim_now()) + 2h;  // at least 70 min ahead, whatever the minute now
    // file2 shifted so its last entry is the hour after the boundary: the
    // history serves the hours up to the boundary, /latest the last one.
    const nlohmann::json recorded = testing::shifted_history("carbon_history_file2.json", boundary);
    nlohmann::json history = recorded;
    history["history"].erase(history["history"].size() - 1);
    testing::ReplayServer server;
    server.on("/v3/carbon-intensity/history", [&](const Query&, const http_server::Request&) {
        return http_server::Response::json(history.dump());
    });
    server.on("/v3/carbon-intensity/latest", [&](const Query&, const http_server::Request&) {
        return http_server::Response::json(recorded["history"].back().dump());
    });
    const auto& entries = recorded["history"];
    const double before_intensity = entries[entries.size() - 2]["carbonIntensity"].get<double>();
    const double after_intensity = entries.back()["carbonIntensity"].get<double>();
    ASSERT_NE(before_intensity, after_intensity);

    ElectricityMapsOptions o;
    o.zone = "US-MIDW-MISO";
    o.base_url = server.url();
    o.token = "t";
    HourlyMonitorOptions options;
    options.poll_interval = 50ms;
    auto monitor = CarbonEmissionMonitor::open(gpus, nullptr, ElectricityMaps::open(o).value(), {}, options).value();

    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.9, &load), ZEUS_SIM_OK);
    advance_to(boundary - 10min);
    const double t0 = truth(0);
    ASSERT_TRUE(monitor->begin_window("cross").ok());
    advance_to(boundary);
    const double t1 = truth(0);
    monitor->poll();  // the reading at the boundary (the thread may have taken it already)
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
    ASSERT_EQ(zeusSimLoadBegin(0, 0.2, &load), ZEUS_SIM_OK);
    advance(20 * 60.0);
    const double t2 = truth(0);
    const auto m = monitor->end_window("cross").value();
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);

    ASSERT_GT(t1 - t0, 600 * 100.0);  // 10 min well above 100 W
    ASSERT_GT(t2 - t1, 1200 * 50.0);
    const double expected = ((t1 - t0) * before_intensity + (t2 - t1) * after_intensity) / kJoulesPerKwh;
    ASSERT_TRUE(m.gpu_carbon_emission.has_value()) << m.provenance.unavailable_reason;
    // The counter-based window energy is within 0.1% of the truth; so is each hour's share.
    EXPECT_NEAR(m.gpu_carbon_emission->at(0), expected, 0.001 * expected);
    EXPECT_NEAR(m.energy.gpu_energy.at(0).energy.count(), t2 - t0, 0.001 * (t2 - t0));
    ASSERT_EQ(m.provenance.hours.size(), 2U);
    EXPECT_EQ(m.provenance.hours[0].hour, boundary - 1h);
    EXPECT_EQ(m.provenance.hours[1].hour, boundary);
    EXPECT_NEAR(m.provenance.hours[0].energy.count(), t1 - t0, 0.002 * (t1 - t0));
    EXPECT_NEAR(m.provenance.hours[1].energy.count(), t2 - t1, 0.002 * (t2 - t1));
    EXPECT_DOUBLE_EQ(m.provenance.hours[0].rate->per_kwh, before_intensity);
    EXPECT_DOUBLE_EQ(m.provenance.hours[1].rate->per_kwh, after_intensity);
    EXPECT_EQ(m.provenance.hours[1].rate->estimated, entries.back()["isEstimated"].get<bool>());
    EXPECT_NEAR(m.energy.time.count(), 1800.0, 1e-3);
}

}  // namespace
}  // namespace zeus::carbon
