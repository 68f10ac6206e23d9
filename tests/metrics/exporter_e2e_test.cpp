// End to end: `zeus exporter` over the GPU simulator under load, scraped
// every second by a real Prometheus (Debian's package, on a loopback port).
// What Prometheus computes from the scrapes -- increase() of the energy
// counter, the power gauges -- is compared with the simulator's ground truth
// over the same interval; a counter reset injected mid-way makes
// increase() neither jump nor go negative. Plus the exporter's bad input.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zeus_sim/zeus_sim.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/sim_fixture.hpp"
#include "prometheus_servers.hpp"
#include "support/command_output.hpp"
#include "support/taken_port.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

using namespace std::chrono_literals;

// The exporter's own settings and the simulated board's (docs/simulator.md).
constexpr double kScrapeIntervalS = 1.0;
constexpr double kSamplePeriodS = 0.25;    // --period of the exporter under test
constexpr double kCounterRefreshS = 0.1;   // A100 energy counter refresh
constexpr double kWindowS = 10.0;          // the interval compared with the truth

// zeusd's `metrics` group over TCP: the alternative source of the same series.
class ZeusdMetricsProcess : public ServerProcess {
  public:
    ZeusdMetricsProcess()
        : ServerProcess(Launch{zeus::testing::zeusd_path(),
                               "zeusd",
                               {"serve", "--mode", "tcp", "--enable", "gpu-read,metrics"},
                               "--tcp-bind-address=",
                               "/metrics",
                               std::nullopt,
                               " zeusd: listening on "},
                        make_dir("zeusd")) {}
};

// Replaces `from` everywhere in `text`.
void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
}

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string url_encode(const std::string& text) {
    std::string out;
    for (const unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += fmt::format("%{:02X}", c);
        }
    }
    return out;
}

// One instant query against Prometheus's HTTP API; the single result's value.
std::optional<double> query(const PrometheusServer& prometheus, const std::string& promql, double at) {
    const std::string body =
        http_get(prometheus.base_url(), fmt::format("/api/v1/query?query={}&time={:.3f}", url_encode(promql), at));
    const auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_discarded() || json.value("status", "") != "success") {
        ADD_FAILURE() << promql << ": " << body;
        return std::nullopt;
    }
    const auto& result = json["data"]["result"];
    if (result.size() != 1 || !result[0].contains("value")) return std::nullopt;
    return std::stod(result[0]["value"][1].get<std::string>());
}

class ExporterEndToEnd : public SimulatedGpus {};

TEST_F(ExporterEndToEnd, PrometheusIncreaseMatchesTheGroundTruthAcrossACounterReset) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "A100-SXM4-40GB"}]})");
    const Gpus gpus = Gpus::open(simulated());  // creates the shared state the exporter opens too
    ASSERT_EQ(gpus.size(), 2U);
    int loads[2] = {-1, -1};
    ASSERT_EQ(zeusSimLoadBegin(0, 0.9, &loads[0]), ZEUS_SIM_OK) << zeusSimLastError();
    ASSERT_EQ(zeusSimLoadBegin(1, 0.4, &loads[1]), ZEUS_SIM_OK);
    ExporterProcess exporter({"--simulate", "--cpus", "none", "--period", std::to_string(kSamplePeriodS)});
    ASSERT_TRUE(exporter.running()) << exporter.log();
    PrometheusServer prometheus({"127.0.0.1:" + std::to_string(exporter.port())}, kScrapeIntervalS);
    ASSERT_TRUE(prometheus.running()) << prometheus.log();

    // Prometheus has scraped us at least twice before the window opens.
    for (int i = 0; i < 100; ++i) {
        auto n = query(prometheus, "count_over_time(up{job=\"zeus\"}[1m])", unix_now());
        if (n && *n >= 2) break;
        std::this_thread::sleep_for(100ms);
    }
    const double start = unix_now();
    const double truth_start[2] = {truth(0), truth(1)};
    std::this_thread::sleep_for(std::chrono::duration<double>(kWindowS / 2));
    // A driver reload on GPU 0, mid-window: its counter restarts from 0.
    ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK);
    std::this_thread::sleep_for(std::chrono::duration<double>(kWindowS / 2));
    const double end = unix_now();
    const double truth_end[2] = {truth(0), truth(1)};
    // Let Prometheus take the scrape that follows the window's end.
    std::this_thread::sleep_for(std::chrono::duration<double>(1.5 * kScrapeIntervalS));
    // PromQL ranges are whole milliseconds (the truth is off by < 0.5 ms of power).
    const auto range_ms = std::lround((end - start) * 1000);
    const double window = static_cast<double>(range_ms) / 1000;
    const std::string range = fmt::format("{}ms", range_ms);

    for (unsigned gpu = 0; gpu < 2; ++gpu) {
        const double truth_j = truth_end[gpu] - truth_start[gpu];
        const double power_w = truth_j / window;
        const std::string series = fmt::format("zeus_gpu_energy_joules_total{{gpu=\"{}\"}}", gpu);
        const auto increase = query(prometheus, fmt::format("increase({}[{}])", series, range), end);
        ASSERT_TRUE(increase) << "no increase() for GPU " << gpu << "; exporter log:\n" << exporter.log();
        // Why the two differ, each term a bound:
        // - a scrape serves the last sweep, and a sweep reads a counter that
        //   refreshed up to one refresh period earlier: each end of the
        //   compared span is late by [0, sample period + refresh period],
        //   so the span differs by at most that much at the average power;
        // - increase() extrapolates the scraped span (at least the window
        //   less one scrape interval) to the window with the rate inside it:
        //   exact for steady power, off by the power's drift otherwise, which
        //   the thermal model keeps under 2 % over seconds;
        // - GPU 0's reset loses the energy between the last read before it
        //   and the reset: at most one sample period plus one refresh.
        double tolerance = power_w * (kSamplePeriodS + kCounterRefreshS) * window / (window - kScrapeIntervalS) +
                           0.02 * truth_j;
        if (gpu == 0) tolerance += power_w * (kSamplePeriodS + kCounterRefreshS);
        std::printf("GPU %u: Prometheus increase %.1f J, ground truth %.1f J, error %+.1f J, bound %.1f J\n", gpu,
                    *increase, truth_j, *increase - truth_j, tolerance);
        EXPECT_NEAR(*increase, truth_j, tolerance) << "GPU " << gpu;
        // A counter that decreased even once shows up in resets(); ours never does.
        EXPECT_EQ(query(prometheus, fmt::format("resets({}[{}])", series, range), end).value_or(-1), 0.0)
            << "GPU " << gpu;
        // The power gauge, averaged over the window, is the average power
        // (instant readings: 0.5 W noise, drift as above).
        const auto gauge = query(
            prometheus, fmt::format("avg_over_time(zeus_gpu_power_instant_watts{{gpu=\"{}\"}}[{}])", gpu, range), end);
        ASSERT_TRUE(gauge);
        EXPECT_NEAR(*gauge, power_w, 0.05 * power_w + 2) << "GPU " << gpu;
    }
    // The reset is seen and counted by the exporter.
    EXPECT_EQ(query(prometheus, "zeus_gpu_energy_resets_total{gpu=\"0\"}", end).value_or(-1), 1.0);

    // Prometheus's own linter accepts what we serve (names, types, units).
    const auto exposition = exporter.dir() / "scrape.txt";
    std::ofstream(exposition) << http_get(exporter.base_url(), "/metrics");
    int code = 0;
    const std::string lint = capture("promtool check metrics < " + exposition.string(), code);
    EXPECT_EQ(code, 0) << lint;
    const std::string config =
        capture("promtool check config " + zeus::testing::source_dir() + "/packaging/prometheus/zeus-scrape.yml", code);
    EXPECT_EQ(code, 0) << config;
    // Every query of the shipped Grafana dashboard runs against this data.
    std::ifstream dashboard_file(zeus::testing::source_dir() + "/packaging/grafana/zeus-energy-dashboard.json");
    const auto dashboard = nlohmann::json::parse(dashboard_file, nullptr, false);
    ASSERT_FALSE(dashboard.is_discarded());
    for (const auto& panel : dashboard["panels"]) {
        for (const auto& target : panel["targets"]) {
            std::string expr = target["expr"].get<std::string>();
            for (const auto& [from, to] : {std::pair<std::string, std::string>{"$__rate_interval", "5s"},
                                           {"$__range", range},
                                           {"$hostname", ".*"}}) {
                for (auto at = expr.find(from); at != std::string::npos; at = expr.find(from)) expr.replace(at, from.size(), to);
            }
            (void)query(prometheus, expr, end);  // fails the test unless Prometheus accepts it
        }
    }
    zeusSimLoadEnd(loads[0]);
    zeusSimLoadEnd(loads[1]);
}

// docs/attribution.md: with --attribution, the PromQL identity
// sum(workloads) + sum(remainder) == the GPU's counter holds at every scrape
// while simulated processes come and go, and no workload series ever resets.
TEST_F(ExporterEndToEnd, PromqlWorkloadsPlusRemainderEqualTheGpuCounterWhileProcessesComeAndGo) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}]})");
    const Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 1U);
    const auto proc = dir_ / "proc";
    for (const auto& [pid, cgroup] : {std::pair<int, std::string>{5001,
                                                                  "0::/kubepods.slice/kubepods-pod4f1b3a8e_9c7d_"
                                                                  "4e2a_8b1f_2a3c4d5e6f70.slice/crio-" +
                                                                      std::string(64, 'b') + ".scope\n"},
                                      {5002, "0::/system.slice/slurmstepd.scope/job_31/step_0/user/task_0\n"}}) {
        std::filesystem::create_directories(proc / std::to_string(pid));
        std::ofstream(proc / std::to_string(pid) / "cgroup") << cgroup;
    }
    ExporterProcess exporter({"--simulate", "--cpus", "none", "--period", std::to_string(kSamplePeriodS),
                              "--attribution", "--proc", proc.string()});
    ASSERT_TRUE(exporter.running()) << exporter.log();
    PrometheusServer prometheus({"127.0.0.1:" + std::to_string(exporter.port())}, kScrapeIntervalS);
    ASSERT_TRUE(prometheus.running()) << prometheus.log();
    const double start = unix_now();
    int a = -1, b = -1;
    ASSERT_EQ(zeusSimProcessLoadBegin(0, 0.6, 5001, 1.0, &a), ZEUS_SIM_OK) << zeusSimLastError();
    std::this_thread::sleep_for(2500ms);
    ASSERT_EQ(zeusSimProcessLoadBegin(0, 0.3, 5002, 1.5, &b), ZEUS_SIM_OK) << zeusSimLastError();
    std::this_thread::sleep_for(2500ms);
    ASSERT_EQ(zeusSimLoadEnd(a), ZEUS_SIM_OK);
    std::this_thread::sleep_for(2500ms);
    ASSERT_EQ(zeusSimLoadEnd(b), ZEUS_SIM_OK);
    std::this_thread::sleep_for(2500ms);
    const double end = unix_now();

    const std::string identity =
        "(sum(zeus_workload_gpu_energy_joules_total{gpu=\"0\"}) or vector(0))"
        " + sum(zeus_workload_gpu_remainder_energy_joules_total{gpu=\"0\"})"
        " - sum(zeus_gpu_energy_joules_total{gpu=\"0\"})";
    int checked = 0;
    for (double t = start + 1; t <= end; t += 0.5) {
        const auto node = query(prometheus, "sum(zeus_gpu_energy_joules_total{gpu=\"0\"})", t);
        if (!node) continue;  // not scraped yet
        const auto difference = query(prometheus, identity, t);
        ASSERT_TRUE(difference) << "at " << t;
        // Integer millijoules in the exporter; the text format's doubles and PromQL's sum round.
        EXPECT_NEAR(*difference, 0.0, 1e-9 * *node) << "at " << t;
        ++checked;
    }
    EXPECT_GE(checked, 8);
    const std::string range = fmt::format("{}ms", std::lround((end - start) * 1000));
    EXPECT_EQ(query(prometheus, fmt::format("sum(resets(zeus_workload_gpu_energy_joules_total[{}]))", range), end)
                  .value_or(-1),
              0.0);
    for (const std::string selector : {"kind=\"container\",pod_uid=\"4f1b3a8e-9c7d-4e2a-8b1f-2a3c4d5e6f70\"",
                                       "kind=\"slurm_job\",slurm_job=\"31\""}) {
        const auto energy = query(prometheus, "sum(zeus_workload_gpu_energy_joules_total{" + selector + "})", end);
        ASSERT_TRUE(energy) << selector << "; exporter log:\n" << exporter.log();
        EXPECT_GT(*energy, 0) << selector;
    }
}

// docs/deploy.md: the exporter and zeusd's /metrics serve the same series; the
// shipped scrape configuration has a job for each, and a node scraped through
// both must not count twice in the shipped dashboard.
TEST_F(ExporterEndToEnd, ShippedScrapeConfigAndDashboardCountEachNodeOnce) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "A100-SXM4-40GB"}]})");
    const Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 2U);
    int loads[2] = {-1, -1};
    ASSERT_EQ(zeusSimLoadBegin(0, 0.8, &loads[0]), ZEUS_SIM_OK) << zeusSimLastError();
    ASSERT_EQ(zeusSimLoadBegin(1, 0.5, &loads[1]), ZEUS_SIM_OK);
    ::setenv("ZEUS_SIMULATE", "1", 1);  // zeusd has no --simulate flag
    ExporterProcess exporter({"--simulate", "--cpus", "none", "--period", std::to_string(kSamplePeriodS)});
    ZeusdMetricsProcess zeusd;
    ASSERT_TRUE(exporter.running()) << exporter.log();
    ASSERT_TRUE(zeusd.running()) << zeusd.log();

    // The shipped file as it is, but for its targets (this machine's two
    // servers, in the order of its jobs: exporter, then zeusd) and 1 s scrapes
    // for a 10 s window.
    std::ifstream shipped(zeus::testing::source_dir() + "/packaging/prometheus/zeus-scrape.yml");
    ASSERT_TRUE(shipped);
    const std::string servers[2] = {fmt::format("127.0.0.1:{}", exporter.port()), fmt::format("127.0.0.1:{}", zeusd.port())};
    std::string config = "global:\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n";
    std::size_t jobs = 0;
    for (std::string line; std::getline(shipped, line);) {
        const auto text = line.find_first_not_of(' ');
        if (text != std::string::npos && line.compare(text, 10, "- targets:") == 0) {
            ASSERT_LT(jobs, 2U) << "more target lists than the two jobs: " << line;
            line = line.substr(0, text) + "- targets: ['" + servers[jobs++] + "']";
        }
        config += line + "\n";
    }
    ASSERT_EQ(jobs, 2U) << "the shipped scrape config should have the exporter's and zeusd's jobs";
    replace_all(config, "scrape_interval: 5s", "scrape_interval: 1s");
    PrometheusServer prometheus(config);
    ASSERT_TRUE(prometheus.running()) << prometheus.log();
    for (int i = 0; i < 100; ++i) {
        auto up = query(prometheus, "min(count_over_time(up[1m])) and count(up == 1) == 2", unix_now());
        if (up && *up >= 2) break;
        std::this_thread::sleep_for(100ms);
    }
    const double start = unix_now();
    const double truth_start = truth(0) + truth(1);
    std::this_thread::sleep_for(std::chrono::duration<double>(kWindowS));
    const double end = unix_now();
    const double truth_j = truth(0) + truth(1) - truth_start;
    std::this_thread::sleep_for(std::chrono::duration<double>(1.5 * kScrapeIntervalS));
    const auto range_ms = std::lround((end - start) * 1000);
    const double window = static_cast<double>(range_ms) / 1000;
    const std::string range = fmt::format("{}ms", range_ms);

    // Both sources are scraped: summing every series counts the node twice.
    const auto naive = query(prometheus, fmt::format("sum(increase(zeus_gpu_energy_joules_total[{}]))", range), end);
    ASSERT_TRUE(naive) << exporter.log() << zeusd.log();
    EXPECT_GT(*naive, 1.5 * truth_j) << "only one source was scraped; the test would prove nothing";

    // As in PrometheusIncreaseMatchesTheGroundTruthAcrossACounterReset, with
    // zeusd's 1 s sampling period (the slower source) for each end.
    constexpr double kZeusdPeriodS = 1.0;
    const double power_w = truth_j / window;
    const double bound = power_w * (kZeusdPeriodS + kCounterRefreshS) * window / (window - kScrapeIntervalS) + 0.02 * truth_j;
    std::ifstream dashboard_file(zeus::testing::source_dir() + "/packaging/grafana/zeus-energy-dashboard.json");
    const auto dashboard = nlohmann::json::parse(dashboard_file, nullptr, false);
    ASSERT_FALSE(dashboard.is_discarded());
    int energy_panels = 0;
    for (const auto& panel : dashboard["panels"]) {
        for (const auto& target : panel["targets"]) {
            std::string expr = target["expr"].get<std::string>();
            replace_all(expr, "$__rate_interval", "5s");
            replace_all(expr, "$__range", range);
            replace_all(expr, "$hostname", ".*");
            const std::string title = panel["title"].get<std::string>();
            if (expr.find("zeus_gpu_") == std::string::npos) {
                (void)query(prometheus, fmt::format("count({}) or vector(0)", expr), end);  // accepted by Prometheus
                continue;
            }
            if (expr.starts_with("sum by (hostname)")) {
                // One node, one value: its energy once, whichever source.
                const auto value = query(prometheus, expr, end);
                ASSERT_TRUE(value) << title << ": " << expr;
                if (expr.find(range) != std::string::npos) {
                    ++energy_panels;
                    std::printf("%s: %.1f J, ground truth %.1f J, bound %.1f J (both sources summed: %.1f J)\n",
                                title.c_str(), *value, truth_j, bound, *naive);
                    EXPECT_NEAR(*value, truth_j, bound) << title << ": " << expr;
                } else {
                    // Over a range longer than the data: half of what summing both sources gives.
                    std::string both = expr;
                    replace_all(both, "max without (instance, job) ", "");
                    const auto summed = query(prometheus, both, end);
                    ASSERT_TRUE(summed) << both;
                    EXPECT_NEAR(*value, *summed / 2, 0.1 * *summed) << title << ": " << expr;
                }
            } else {
                // A series per GPU, not one per GPU and source.
                EXPECT_EQ(query(prometheus, fmt::format("count({})", expr), end).value_or(-1), 2.0) << title << ": " << expr;
            }
        }
    }
    EXPECT_EQ(energy_panels, 1) << "the dashboard's energy-per-node panel over its time range";
    zeusSimLoadEnd(loads[0]);
    zeusSimLoadEnd(loads[1]);
}

TEST_F(ExporterEndToEnd, DcgmLabelsFromTheCommandLine) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}]})");
    const Gpus gpus = Gpus::open(simulated());
    ExporterProcess exporter({"--simulate", "--cpus", "none", "--labels", "dcgm", "--hostname", "node-9"});
    ASSERT_TRUE(exporter.running()) << exporter.log();
    const auto samples = parse_exposition(http_get(exporter.base_url(), "/metrics"));
    const auto& id = gpus[0].identity();
    EXPECT_EQ(find_samples(samples, "zeus_gpu_power_average_watts",
                           {{"gpu", "0"}, {"UUID", id.uuid}, {"modelName", id.name}, {"Hostname", "node-9"},
                            {"pci_bus_id", id.pci_bus_id}, {"device", "nvidia0"}, {"simulated", "true"}})
                  .size(),
              1U);
    int code = 0;
    const std::string out =
        capture(fmt::format("{} exporter --simulate --labels prometheus", zeus::testing::zeus_cli_path()), code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("--labels"), std::string::npos) << out;
}

TEST_F(ExporterEndToEnd, BadInputIsAClearErrorNamingTheFix) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "A100-SXM4-40GB"}]})");
    int code = 0;
    std::string out;
    std::string taken;
    {
        const TakenPort port;  // a port already in use
        taken = port.address();
        out = capture(
            fmt::format("{} exporter --simulate --cpus none --listen {}", zeus::testing::zeus_cli_path(), taken), code);
    }
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("cannot listen on " + taken), std::string::npos) << out;
    EXPECT_NE(out.find("--listen"), std::string::npos) << out;

    out = capture(fmt::format("{} exporter --simulate --cpus none --listen localhost", zeus::testing::zeus_cli_path()),
                  code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("--listen: TCP address 'localhost' has no port"), std::string::npos) << out;
    // Each server command's fix names its own default port, never zeusd's 4938.
    const auto database = std::filesystem::temp_directory_path() / fmt::format("zeus-listen-{}.db", ::getpid());
    for (const auto& [command, port] : {std::pair<std::string, std::string>{"exporter --simulate --cpus none", "9466"},
                                        {"bso-server --database " + database.string(), "8000"}}) {
        out = capture(fmt::format("{} {} --listen 127.0.0.1", zeus::testing::zeus_cli_path(), command), code);
        EXPECT_EQ(code, 2) << command << ": " << out;
        EXPECT_NE(out.find("for example 127.0.0.1:" + port), std::string::npos) << command << ": " << out;
        EXPECT_EQ(out.find("4938"), std::string::npos) << command << ": " << out;
    }
    std::filesystem::remove(database);

    out = capture(fmt::format("{} exporter --simulate --cpus none --gpus 7", zeus::testing::zeus_cli_path()), code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("--gpus: no GPU 7; the valid indices are 0-1"), std::string::npos) << out;

    out = capture(fmt::format("{} exporter --simulate --period 0", zeus::testing::zeus_cli_path()), code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("--period: 0 is out of range; give a number from 0.01 to 3600 s"), std::string::npos) << out;
}

TEST_F(ExporterEndToEnd, RunPushesTheCommandsEnergyAsAHistogram) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}]})");
    Pushgateway gateway;
    int code = 0;
    const std::string out =
        capture(fmt::format("{} run --simulate --cpus none --format json --push-gateway {} --job batch -- sleep 0.3",
                            zeus::testing::zeus_cli_path(), gateway.base_url()),
                code);
    ASSERT_EQ(code, 0) << out;
    const auto report = nlohmann::json::parse(out.substr(0, out.rfind('}') + 1), nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << out;
    const double reported = report["devices"][0]["energy_j"].get<double>();
    const auto samples = parse_exposition(http_get(gateway.base_url(), "/metrics"));
    const std::map<std::string, std::string> series{{"job", "batch"}, {"window", "sleep"}, {"index", "0"}};
    ASSERT_EQ(find_samples(samples, "energy_monitor_gpu_energy_joules_count", series).size(), 1U) << out;
    EXPECT_EQ(find_samples(samples, "energy_monitor_gpu_energy_joules_count", series)[0].value, 1.0);
    EXPECT_NEAR(find_samples(samples, "energy_monitor_gpu_energy_joules_sum", series)[0].value, reported,
                1e-9 * reported);

    // Bad input is refused before the command runs (it would have created the file).
    const auto marker = dir_ / "ran";
    std::string bad = capture(fmt::format("{} run --simulate --push-gateway 'http://a b:1' --job j -- touch {}",
                                          zeus::testing::zeus_cli_path(), marker.string()),
                              code);
    EXPECT_EQ(code, 125) << bad;
    EXPECT_NE(bad.find("--push-gateway: Pushgateway URL 'http://a b:1' is malformed"), std::string::npos) << bad;
    bad = capture(fmt::format("{} run --simulate --push-gateway {} -- touch {}", zeus::testing::zeus_cli_path(),
                              gateway.base_url(), marker.string()),
                  code);
    EXPECT_EQ(code, 125) << bad;
    EXPECT_NE(bad.find("--push-gateway needs --job NAME"), std::string::npos) << bad;
    EXPECT_FALSE(std::filesystem::exists(marker));
    // An unreachable gateway is a warning: the command's exit code stands.
    bad = capture(fmt::format("{} run --simulate --cpus none --push-gateway 127.0.0.1:{} --job j -- true",
                              zeus::testing::zeus_cli_path(), free_port()),
                  code);
    EXPECT_EQ(code, 0) << bad;
    EXPECT_NE(bad.find("zeus: warning: pushing metrics to http://127.0.0.1:"), std::string::npos) << bad;
}

}  // namespace
}  // namespace zeus::testing
