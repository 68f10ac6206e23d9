// zeusd's metrics API group: off by default; with --enable metrics, GET
// /metrics serves the exporter's metrics (RAPL energy included) to a
// scraper that needs no privilege, through the same HTTP server.
#include <chrono>
#include <thread>

#include "metrics/prometheus_servers.hpp"
#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(ZeusdTest, MetricsGroupIsOffByDefault) {
    start();
    const auto reply = get("/metrics");
    EXPECT_EQ(reply.status, 404) << reply.body;
    EXPECT_EQ(json_of(get("/discover"))["enabled_api_groups"].dump().find("metrics"), std::string::npos);
}

TEST_F(ZeusdTest, MetricsServeRaplAndGpuEnergy) {
    start({"--enable", "metrics"});
    auto reply = get("/metrics");
    ASSERT_EQ(reply.status, 200) << reply.body << log();
    EXPECT_EQ(reply.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    auto samples = parse_exposition(reply.body);
    const auto package = find_samples(samples, "zeus_cpu_package_energy_joules_total", {{"package", "0"}});
    ASSERT_EQ(package.size(), 1U) << reply.body;
    EXPECT_EQ(find_samples(samples, "zeus_cpu_dram_energy_joules_total", {{"package", "0"}}).size(), 1U);
    const Gpus gpus = local_gpus();
    for (unsigned i = 0; i < gpus.size(); ++i) {
        EXPECT_EQ(find_samples(samples, "zeus_gpu_energy_joules_total",
                               {{"gpu", std::to_string(i)}, {"uuid", gpus[i].identity().uuid}})
                      .size(),
                  1U);
    }
    // The package draws 3 J: the next sweep (every second) shows it.
    powercap_.set_energy(package_, kPackageStartUj + 3'000'000);
    double now = package[0].value;
    for (int i = 0; i < 50 && now < package[0].value + 3.0 - 1e-9; ++i) {
        std::this_thread::sleep_for(100ms);
        now = find_samples(parse_exposition(get("/metrics").body), "zeus_cpu_package_energy_joules_total",
                           {{"package", "0"}})
                  .at(0)
                  .value;
    }
    EXPECT_NEAR(now - package[0].value, 3.0, 1e-9);
    // OpenMetrics for a scraper that prefers it; only GET.
    reply = get("/metrics", {{"Accept", "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"}});
    EXPECT_TRUE(reply.body.ends_with("# EOF\n"));
    EXPECT_EQ(post("/metrics").status, 405);
    // The other groups stay off when only metrics is enabled.
    EXPECT_EQ(get("/cpu/get_cumulative_energy?cpu=true&dram=true").status, 404);
}

}  // namespace
}  // namespace zeus::testing
