// The exporter's sampler over the GPU simulator (and a generated RAPL
// tree): every reading with stable labels, counters that follow the ground
// truth and never go down. Failures and bad input: device_metrics_test.cpp.
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "device/cpu/fake_powercap.hpp"
#include "metrics/device_metrics_fixture.hpp"
#include "prometheus_servers.hpp"
#include "support/sim_fixture.hpp"
#include "zeus/metrics/device_metrics.hpp"
#include "support/build_paths.hpp"

namespace zeus::metrics {
namespace {

using namespace std::chrono_literals;
using testing::find_samples;
using testing::parse_exposition;

class DeviceMetricsTest : public DeviceMetricsFixture<testing::SimulatedGpus> {};

TEST_F(DeviceMetricsTest, EveryReadingWithStableLabels) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "P100-PCIE-16GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 2U);
    auto metrics = start(gpus, nullptr, {});
    ASSERT_NE(metrics, nullptr);
    const auto samples = scrape(*metrics);
    const std::map<std::string, std::string> a100{
        {"gpu", "0"}, {"uuid", gpus[0].identity().uuid}, {"name", gpus[0].identity().name}, {"hostname", "node-7"}};
    EXPECT_GT(value(samples, "zeus_gpu_energy_joules_total", a100), 0);
    EXPECT_GT(value(samples, "zeus_gpu_power_instant_watts", a100), 0);
    EXPECT_GT(value(samples, "zeus_gpu_power_average_watts", a100), 0);
    EXPECT_GT(value(samples, "zeus_gpu_temperature_celsius", a100), 0);
    EXPECT_EQ(value(samples, "zeus_gpu_power_limit_watts", a100),
              quantity_cast<Watts>(gpus[0].power_limit().value()).count());
    double mhz = 0;
    ASSERT_EQ(zeusSimClockMhz(0, &mhz), ZEUS_SIM_OK);
    EXPECT_NEAR(value(samples, "zeus_gpu_sm_clock_hertz", a100), mhz * 1e6, 1e6);
    // The P100 has no energy counter: no energy series and no error for it
    // (its absence is a capability, not a failed read).
    EXPECT_TRUE(find_samples(samples, "zeus_gpu_energy_joules_total", {{"gpu", "1"}}).empty());
    EXPECT_EQ(find_samples(samples, "zeus_gpu_power_instant_watts", {{"gpu", "1"}}).size(), 1U);
    EXPECT_TRUE(find_samples(samples, "zeus_exporter_read_errors_total", {{"device", "gpu1"}}).empty());
    // Labels in one order, every series: what Prometheus needs for stable identities.
    const std::string body = *metrics->scrape(ExpositionFormat::PrometheusText).body;
    EXPECT_NE(body.find("zeus_gpu_energy_joules_total{gpu=\"0\",uuid=\""), std::string::npos);
    EXPECT_EQ(body.find("NaN"), std::string::npos);
    // OpenMetrics when asked.
    const auto om = metrics->scrape_for("application/openmetrics-text;version=1.0.0");
    EXPECT_EQ(om.content_type, content_type(ExpositionFormat::OpenMetrics));
    EXPECT_TRUE(om.body->ends_with("# EOF\n"));
}

TEST_F(DeviceMetricsTest, EnergyCounterFollowsTheSimulatorsGroundTruth) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    auto metrics = start(gpus, nullptr, every(1h));
    ASSERT_NE(metrics, nullptr);
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.7, &load), ZEUS_SIM_OK);
    metrics->sample_now();
    const double e0 = value(scrape(*metrics), "zeus_gpu_energy_joules_total", {{"gpu", "0"}});
    const double t0 = truth(0);
    advance(30);
    metrics->sample_now();
    const double e1 = value(scrape(*metrics), "zeus_gpu_energy_joules_total", {{"gpu", "0"}});
    const double t1 = truth(0);
    // The counter refreshes every 100 ms: each end may lag by one refresh at
    // most 400 W, plus the counter's 1 mJ resolution.
    EXPECT_NEAR(e1 - e0, t1 - t0, 2 * 0.1 * 400 + 2e-3);

    // A driver reload: the counter restarts at zero, the exported total does not.
    ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK);
    advance(10);
    metrics->sample_now();
    const auto after = scrape(*metrics);
    const double e2 = value(after, "zeus_gpu_energy_joules_total", {{"gpu", "0"}});
    EXPECT_GE(e2, e1);
    EXPECT_EQ(value(after, "zeus_gpu_energy_resets_total", {{"gpu", "0"}}), 1.0);
    zeusSimLoadEnd(load);
}

TEST_F(DeviceMetricsTest, DcgmLabelStyleAndSimulatedGpusMarked) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 2U);
    DeviceMetricsOptions options;
    options.label_style = LabelStyle::Dcgm;
    auto metrics = start(gpus, nullptr, options);
    ASSERT_NE(metrics, nullptr);
    const auto samples = scrape(*metrics);
    const auto& id = gpus[1].identity();
    // dcgm-exporter's label names and values, so its dashboards select the same GPU.
    const std::map<std::string, std::string> dcgm{{"gpu", "1"},
                                                  {"UUID", id.uuid},
                                                  {"pci_bus_id", id.pci_bus_id},
                                                  {"device", "nvidia" + std::to_string(id.physical_index)},
                                                  {"modelName", id.name},
                                                  {"Hostname", "node-7"},
                                                  {"simulated", "true"}};
    EXPECT_FALSE(id.pci_bus_id.empty());
    EXPECT_GT(value(samples, "zeus_gpu_energy_joules_total", dcgm), 0);
    for (const auto& sample : find_samples(samples, "zeus_gpu_power_average_watts")) {
        EXPECT_EQ(sample.labels.size(), dcgm.size());
        EXPECT_FALSE(sample.labels.contains("uuid"));
        EXPECT_FALSE(sample.labels.contains("hostname"));
    }
    // The project's style marks simulated GPUs too.
    auto zeus_style = start(gpus, nullptr, {});
    ASSERT_NE(zeus_style, nullptr);
    EXPECT_EQ(find_samples(scrape(*zeus_style), "zeus_gpu_energy_joules_total", {{"simulated", "true"}}).size(), 2U);
}

TEST_F(DeviceMetricsTest, CpuPackagesAndDram) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    testing::FakePowercap powercap;
    const auto zone0 = powercap.add_zone(0, "package-0", 1'000'000, 262143328850);
    powercap.add_subzone(0, 0, 500'000, 65712999613);
    const auto zone1 = powercap.add_zone(1, "package-1", 2'000'000, 262143328850);
    CpuOptions cpu_options;
    cpu_options.powercap_root = powercap.root().string();
    Cpus cpus = Cpus::open(cpu_options);
    ASSERT_EQ(cpus.size(), 2U) << (cpus.status() ? "" : cpus.status().error().describe());
    auto metrics = start(gpus, &cpus, every(1h));
    ASSERT_NE(metrics, nullptr);
    powercap.set_energy(zone0, 6'000'000);  // +5 J
    powercap.set_energy(zone1, 2'500'000);  // +0.5 J
    metrics->sample_now();
    const auto samples = scrape(*metrics);
    EXPECT_NEAR(value(samples, "zeus_cpu_package_energy_joules_total",
                      {{"package", "0"}, {"name", "package-0"}, {"hostname", "node-7"}}),
                5.0, 1e-9);
    EXPECT_NEAR(value(samples, "zeus_cpu_package_energy_joules_total", {{"package", "1"}}), 0.5, 1e-9);
    EXPECT_EQ(find_samples(samples, "zeus_cpu_dram_energy_joules_total", {{"package", "0"}}).size(), 1U);
    EXPECT_TRUE(find_samples(samples, "zeus_cpu_dram_energy_joules_total", {{"package", "1"}}).empty());
}

// docs/metrics.md's exporter table is the list of what is served: every
// family the sampler serves has a row with its type, unit, labels and source,
// every row is served, and the labels a row names are the labels served.
TEST_F(DeviceMetricsTest, DocsListEveryMetricWithTypeUnitLabelsAndSource) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    testing::FakePowercap powercap;
    const auto zone = powercap.add_zone(0, "package-0", 1'000'000, 262143328850);
    powercap.add_subzone(0, 0, 500'000, 65712999613);
    CpuOptions cpu_options;
    cpu_options.powercap_root = powercap.root().string();
    Cpus cpus = Cpus::open(cpu_options);
    ASSERT_EQ(cpus.size(), 1U);
    auto metrics = start(gpus, &cpus, every(1h));
    ASSERT_NE(metrics, nullptr);
    powercap.set_energy(zone, 2'000'000);
    metrics->sample_now();
    const std::string body = *metrics->scrape(ExpositionFormat::PrometheusText).body;

    struct Row {
        std::string type, unit, labels, source;
    };
    std::map<std::string, Row> documented;
    std::ifstream docs(zeus::testing::source_dir() + "/docs/metrics.md");
    ASSERT_TRUE(docs) << "docs/metrics.md is missing";
    for (std::string line; std::getline(docs, line);) {
        if (line.rfind("| `zeus_", 0) != 0) continue;
        std::vector<std::string> cells;
        std::stringstream fields(line.substr(1));
        for (std::string cell; std::getline(fields, cell, '|');) {
            const auto first = cell.find_first_not_of(' ');
            const auto last = cell.find_last_not_of(' ');
            cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
        }
        ASSERT_GE(cells.size(), 5U) << line;
        const std::string name = cells[0].substr(1, cells[0].size() - 2);  // without the backticks
        EXPECT_FALSE(documented.contains(name)) << name << " has two rows";
        documented[name] = {cells[1], cells[2], cells[3], cells[4]};
    }

    std::map<std::string, std::string> served;  // family -> type
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("# TYPE ", 0) != 0) continue;
        const auto space = line.find(' ', 7);
        served[line.substr(7, space - 7)] = line.substr(space + 1);
    }
    ASSERT_FALSE(served.empty()) << body;
    // Simulated GPUs, as here, also carry simulated="true".
    const std::set<std::string> gpu_labels{"gpu", "uuid", "name", "hostname", "simulated"};
    const std::set<std::string> cpu_labels{"package", "name", "hostname"};
    const auto samples = parse_exposition(body);
    for (const auto& [name, type] : served) {
        ASSERT_TRUE(documented.contains(name)) << name << " is served but has no row in docs/metrics.md";
        const Row& row = documented[name];
        EXPECT_EQ(row.type, type) << name;
        EXPECT_FALSE(row.unit.empty()) << name << ": the unit cell is empty (\"–\" for none)";
        EXPECT_FALSE(row.source.empty() || row.source == "–") << name << ": no source";
        for (const auto& sample : find_samples(samples, name)) {
            std::set<std::string> labels;
            for (const auto& [label, value] : sample.labels) labels.insert(label);
            if (row.labels == "GPU") {
                EXPECT_EQ(labels, gpu_labels) << name;
            } else if (row.labels == "CPU") {
                EXPECT_EQ(labels, cpu_labels) << name;
            } else {
                for (const auto& label : labels) {
                    EXPECT_NE(row.labels.find("`" + label + "`"), std::string::npos)
                        << name << ": label " << label << " is not in the row's labels (" << row.labels << ")";
                }
            }
        }
    }
    for (const auto& [name, row] : documented) EXPECT_TRUE(served.contains(name)) << name << " is documented but not served";
    // The families that have samples here: GPU and CPU ones, with their documented labels.
    EXPECT_FALSE(find_samples(samples, "zeus_cpu_dram_energy_joules_total").empty());
    EXPECT_FALSE(find_samples(samples, "zeus_gpu_energy_joules_total").empty());
}

}  // namespace
}  // namespace zeus::metrics
