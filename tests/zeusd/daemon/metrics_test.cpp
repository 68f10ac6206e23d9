// zeusd's metrics API group: off by default; with --enable metrics, GET
// /metrics serves the exporter's metrics (RAPL energy included) to a
// scraper that needs no privilege, through the same HTTP server.
#include <chrono>
#include <thread>

#include "metrics/prometheus_servers.hpp"
#include "support/fake_proc.hpp"
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

// --attribution: the exporter's per-workload series, through the same code,
// over a fake /proc naming the simulator's processes: at every sweep each
// GPU's workload series plus its remainder series add up to its energy.
TEST_F(ZeusdTest, MetricsAttributionAddsUpToEachGpusEnergy) {
    FakeProcTree proc(dir_ / "proc");
    const std::string container(64, 'c');
    proc.add(1001, "0::/system.slice/docker-" + container + ".scope\n", FakeProcTree::status_of_uid(0));
    proc.add_user_process(1002, 4000002);
    start({"--enable", "gpu-read,metrics", "--attribution", "--proc", proc.root().string()});
    SimBurn in_container(0, 1001);
    SimBurn of_user(1, 1002);
    ASSERT_TRUE(eventually([] { return gpu_runs(0, 1001) && gpu_runs(1, 1002); }));

    const auto sum = [](const std::vector<ParsedSample>& samples, const std::string& name, const std::string& gpu) {
        double total = 0;
        for (const auto& sample : find_samples(samples, name, {{"gpu", gpu}})) total += sample.value;
        return total;
    };
    // Until both processes have energy of their own (a sweep a second).
    std::vector<ParsedSample> samples;
    ASSERT_TRUE(eventually(
        [&] {
            samples = parse_exposition(get("/metrics").body);
            return sum(samples, "zeus_workload_gpu_energy_joules_total", "0") > 0 &&
                   sum(samples, "zeus_workload_gpu_energy_joules_total", "1") > 0;
        },
        std::chrono::seconds(20)))
        << log();
    for (int scrape = 0; scrape < 3; ++scrape) {
        if (scrape > 0) samples = parse_exposition(get("/metrics").body);
        for (const std::string gpu : {"0", "1", "2", "3"}) {
            const auto node = find_samples(samples, "zeus_gpu_energy_joules_total", {{"gpu", gpu}});
            if (node.empty()) continue;  // the simulator's default has fewer GPUs
            const double parts = sum(samples, "zeus_workload_gpu_energy_joules_total", gpu) +
                                 sum(samples, "zeus_workload_gpu_remainder_energy_joules_total", gpu);
            // Integer millijoules underneath: equal up to the text's float rounding.
            EXPECT_NEAR(parts, node[0].value, 1e-6 * node[0].value) << "GPU " << gpu;
        }
        std::this_thread::sleep_for(500ms);
    }
    EXPECT_EQ(find_samples(samples, "zeus_workload_gpu_energy_joules_total",
                           {{"gpu", "0"}, {"kind", "container"}, {"container_id", container}})
                  .size(),
              1U);
    EXPECT_EQ(find_samples(samples, "zeus_workload_gpu_energy_joules_total",
                           {{"gpu", "1"}, {"kind", "user"}, {"user", "4000002"}})
                  .size(),
              1U);
}

TEST_F(ZeusdTest, MetricsAttributionNeedsTheMetricsGroup) {
    const auto [status, output] =
        run_zeusd({"serve", "--socket-path", *endpoint_.unix_path, "--attribution"}, daemon_env());
    EXPECT_NE(status, 0) << output;
    EXPECT_NE(output.find("--attribution: the per-workload series are served on GET /metrics, and the metrics "
                          "group is off"),
              std::string::npos)
        << output;
}

}  // namespace
}  // namespace zeus::testing
