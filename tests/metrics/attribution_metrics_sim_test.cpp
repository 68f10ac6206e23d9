// The exporter's per-workload energy over the GPU simulator and a fake /proc:
// while simulated processes come and go, every sweep's workload series plus
// its remainder series add up to the GPU's energy counter series (the PromQL
// identity sum by (gpu) (workloads) + sum by (gpu) (remainder) == node), and
// no workload series ever decreases while it lives.
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <fstream>
#include <map>

#include "metrics/device_metrics_fixture.hpp"
#include "support/sim_fixture.hpp"
#include "zeus/metrics/device_metrics.hpp"

namespace zeus::metrics {
namespace {

using testing::find_samples;

class AttributionMetricsTest : public DeviceMetricsFixture<testing::SimulatedGpus> {
  protected:
    std::filesystem::path proc() { return dir_ / "proc"; }
    void add_process(int pid, const std::string& cgroup) {
        std::filesystem::create_directories(proc() / std::to_string(pid));
        std::ofstream(proc() / std::to_string(pid) / "cgroup") << cgroup;
        std::ofstream(proc() / std::to_string(pid) / "status") << "Uid:\t0\t0\t0\t0\n";
    }
    static double sum(const std::vector<testing::ParsedSample>& samples, const std::string& name,
                      const std::string& gpu) {
        double total = 0;
        for (const auto& s : find_samples(samples, name, {{"gpu", gpu}})) total += s.value;
        return total;
    }
};

TEST_F(AttributionMetricsTest, WorkloadsPlusRemainderAddUpToTheGpuCounterAtEverySweep) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}, {"model": "H100-SXM5-80GB"}]})");
    const std::string id(64, 'c');
    add_process(1001,
                "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod4f1b3a8e_9c7d_4e2a_8b1f_"
                "2a3c4d5e6f70.slice/cri-containerd-" +
                    id + ".scope\n");
    add_process(1002, "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n");
    // 1003 runs on the GPU but has no /proc entry here (another PID namespace).
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 2U);
    DeviceMetricsOptions options = every(std::chrono::hours(1));
    options.attribution = AttributionOptions{};
    options.attribution->proc_root = proc().string();
    auto metrics = start(gpus, nullptr, options);
    ASSERT_NE(metrics, nullptr);

    std::map<std::string, double> last_workload_value;
    const auto check = [&](const char* when) {
        metrics->sample_now();
        const auto samples = scrape(*metrics);
        for (const std::string gpu : {"0", "1"}) {
            const auto node = find_samples(samples, "zeus_gpu_energy_joules_total", {{"gpu", gpu}});
            ASSERT_EQ(node.size(), 1U) << when;
            const double parts = sum(samples, "zeus_workload_gpu_energy_joules_total", gpu) +
                                 sum(samples, "zeus_workload_gpu_remainder_energy_joules_total", gpu);
            // Integer millijoules underneath: equal up to the text's float rounding.
            EXPECT_NEAR(parts, node[0].value, 1e-6 * node[0].value) << when << ", GPU " << gpu;
        }
        for (const auto& s : find_samples(samples, "zeus_workload_gpu_energy_joules_total")) {
            std::string key;
            for (const auto& [k, v] : s.labels) key += k + "=" + v + ",";
            auto [it, inserted] = last_workload_value.emplace(key, s.value);
            if (!inserted) {
                EXPECT_GE(s.value, it->second) << when << ": " << key;
            }
            it->second = s.value;
        }
    };
    check("start");
    int a = 0, b = 0, c = 0;
    ASSERT_EQ(zeusSimProcessLoadBegin(0, 0.6, 1001, 1.0, &a), ZEUS_SIM_OK) << zeusSimLastError();
    ASSERT_EQ(zeusSimProcessLoadBegin(0, 0.3, 1002, 1.5, &b), ZEUS_SIM_OK) << zeusSimLastError();
    ASSERT_EQ(zeusSimProcessLoadBegin(1, 0.9, 1003, 1.0, &c), ZEUS_SIM_OK) << zeusSimLastError();
    for (int i = 0; i < 5; ++i) {
        advance(2);
        check("both running");
    }
    ASSERT_EQ(zeusSimLoadEnd(a), ZEUS_SIM_OK);
    for (int i = 0; i < 3; ++i) {
        advance(2);
        check("one ended");
    }
    ASSERT_EQ(zeusSimLoadEnd(b), ZEUS_SIM_OK);
    ASSERT_EQ(zeusSimLoadEnd(c), ZEUS_SIM_OK);
    advance(2);
    check("all ended");

    const auto samples = scrape(*metrics);
    const auto container = find_samples(samples, "zeus_workload_gpu_energy_joules_total",
                                        {{"gpu", "0"},
                                         {"kind", "container"},
                                         {"container_id", id},
                                         {"pod_uid", "4f1b3a8e-9c7d-4e2a-8b1f-2a3c4d5e6f70"},
                                         {"user", "root"}});
    ASSERT_FALSE(container.empty());
    EXPECT_GT(container[0].value, 0);
    EXPECT_FALSE(
        find_samples(samples, "zeus_workload_gpu_energy_joules_total", {{"kind", "slurm_job"}, {"slurm_job", "4242"}})
            .empty());
    // The process without /proc: its energy is the "unresolved" remainder, and counted as an error.
    const auto unresolved = find_samples(samples, "zeus_workload_gpu_remainder_energy_joules_total",
                                         {{"gpu", "1"}, {"reason", "unresolved"}});
    ASSERT_EQ(unresolved.size(), 1U);
    EXPECT_GT(unresolved[0].value, 0);
    EXPECT_FALSE(find_samples(samples, "zeus_exporter_read_errors_total", {{"device", "gpu1"}, {"reason", "not_found"}})
                     .empty());
}

// A --proc that is no directory stops start-up, as zeusd's does: otherwise
// every share would silently be the unresolved remainder.
TEST_F(AttributionMetricsTest, AProcRootThatIsNoDirectoryIsRefused) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    std::ofstream(dir_ / "a-file") << "x";
    for (const auto& root : {dir_ / "missing", dir_ / "a-file"}) {
        DeviceMetricsOptions options = every(std::chrono::hours(1));
        options.attribution = AttributionOptions{};
        options.attribution->proc_root = root.string();
        const auto started = DeviceMetrics::start(gpus, nullptr, options);
        ASSERT_FALSE(started.ok()) << root;
        const std::string message = started.error().describe();
        EXPECT_NE(message.find("--proc: " + root.string() + " is not a directory"), std::string::npos) << message;
    }
}

TEST_F(AttributionMetricsTest, OffByDefault) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    auto metrics = start(gpus, nullptr, every(std::chrono::hours(1)));
    ASSERT_NE(metrics, nullptr);
    const std::string body = *metrics->scrape(ExpositionFormat::PrometheusText).body;
    EXPECT_EQ(body.find("zeus_workload_"), std::string::npos);
}

}  // namespace
}  // namespace zeus::metrics
