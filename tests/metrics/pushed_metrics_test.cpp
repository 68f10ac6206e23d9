// The original's three pushed metric kinds against the real Pushgateway
// (Debian's prometheus-pushgateway on a loopback port): what the gateway
// serves back is what was measured, bucket by bucket.
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <thread>

#include "support/build_paths.hpp"
#include "support/command_output.hpp"
#include "support/sim_fixture.hpp"
#include "support/test_directory.hpp"
#include "prometheus_servers.hpp"
#include "zeus/metrics/pushed_metrics.hpp"

namespace zeus::metrics {
namespace {

using namespace std::chrono_literals;
using testing::find_samples;
using testing::parse_exposition;

// Collects warnings instead of printing them.
struct Warnings {
    std::mutex mutex;
    std::vector<std::string> lines;
    WarningSink sink() {
        return [this](const std::string& line) {
            std::lock_guard lock(mutex);
            lines.push_back(line);
        };
    }
    std::vector<std::string> containing(const std::string& text) {
        std::lock_guard lock(mutex);
        std::vector<std::string> out;
        for (const auto& l : lines) {
            if (l.find(text) != std::string::npos) out.push_back(l);
        }
        return out;
    }
};

class PushedMetricsTest : public testing::SimulatedGpus {
  protected:
    static std::vector<testing::ParsedSample> gateway_samples(const testing::Pushgateway& gateway) {
        return parse_exposition(testing::http_get(gateway.base_url(), "/metrics"));
    }
};

TEST_F(PushedMetricsTest, HistogramBucketsAndCountsMatchTheWindowsMeasured) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 1U);
    testing::Pushgateway gateway;
    Warnings warnings;
    auto histogram =
        EnergyHistogram::open(gpus, nullptr, {}, {0}, gateway.base_url(), "zeus_histogram_test", kDefaultGpuBuckets,
                              kDefaultCpuBuckets, kDefaultDramBuckets, warnings.sink());
    ASSERT_TRUE(histogram) << histogram.error().describe();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
    // Windows from under 50 J to over 1000 J, so every bucket and both
    // out-of-range warnings are exercised.
    std::vector<double> measured;
    for (double seconds : {0.1, 0.4, 0.9, 1.3, 2.5, 5.0}) {
        const double before = truth(0);
        ASSERT_TRUE((*histogram)->begin_window("step"));
        advance(seconds);
        auto m = (*histogram)->end_window_measured("step");
        ASSERT_TRUE(m) << m.error().describe();
        const double joules = m->gpu_energy.at(0).energy.count();
        // The window's energy is the simulator's (within one counter refresh of power).
        EXPECT_NEAR(joules, truth(0) - before, 0.1 * 400 + 1e-3) << seconds << " s window";
        measured.push_back(joules);
    }
    zeusSimLoadEnd(load);

    const auto samples = gateway_samples(gateway);
    const std::map<std::string, std::string> series{{"job", "zeus_histogram_test"}, {"window", "step"}, {"index", "0"}};
    // The gateway re-renders bounds in Go's format (le="50"): compare them as numbers.
    const auto buckets = find_samples(samples, "energy_monitor_gpu_energy_joules_bucket", series);
    for (double bound : kDefaultGpuBuckets) {
        const auto bucket = std::find_if(buckets.begin(), buckets.end(), [&](const testing::ParsedSample& b) {
            return b.labels.at("le") != "+Inf" && std::stod(b.labels.at("le")) == bound;
        });
        ASSERT_NE(bucket, buckets.end()) << "le=" << bound;
        const auto expected = std::count_if(measured.begin(), measured.end(), [&](double j) { return j <= bound; });
        EXPECT_EQ(bucket->value, static_cast<double>(expected)) << "le=" << bound;
    }
    EXPECT_EQ(buckets.size(), kDefaultGpuBuckets.size() + 1);
    auto inf = series;
    inf["le"] = "+Inf";
    ASSERT_EQ(find_samples(samples, "energy_monitor_gpu_energy_joules_bucket", inf).size(), 1U);
    EXPECT_EQ(find_samples(samples, "energy_monitor_gpu_energy_joules_bucket", inf)[0].value, 6.0);
    ASSERT_EQ(find_samples(samples, "energy_monitor_gpu_energy_joules_count", series).size(), 1U);
    EXPECT_EQ(find_samples(samples, "energy_monitor_gpu_energy_joules_count", series)[0].value, 6.0);
    const double sum = std::accumulate(measured.begin(), measured.end(), 0.0);
    EXPECT_NEAR(find_samples(samples, "energy_monitor_gpu_energy_joules_sum", series).at(0).value, sum, 1e-9 * sum);
    // No CPUs selected: no CPU or DRAM histogram, as in the original.
    EXPECT_TRUE(find_samples(samples, "energy_monitor_cpu_energy_joules_count").empty());
    // Out-of-range windows are warned about; a working gateway is not.
    EXPECT_FALSE(warnings.containing("exceeds the maximum bucket value of 1000").empty());
    EXPECT_FALSE(warnings.containing("below the minimum bucket value of 50").empty());
    EXPECT_TRUE(warnings.containing("push").empty());
}

TEST_F(PushedMetricsTest, GatewayDownIsOneWarningAndTheNextPushCarriesEverything) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    const unsigned port = testing::free_port();
    const std::string url = "127.0.0.1:" + std::to_string(port);  // no scheme: http:// is assumed, as in Python
    Warnings warnings;
    auto histogram = EnergyHistogram::open(gpus, nullptr, {}, {0}, url, "late_gateway", kDefaultGpuBuckets,
                                           kDefaultCpuBuckets, kDefaultDramBuckets, warnings.sink());
    ASSERT_TRUE(histogram) << histogram.error().describe();
    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE((*histogram)->begin_window("w"));
        advance(0.5);
        EXPECT_TRUE((*histogram)->end_window("w")) << "a gateway that is down is never an error";
    }
    const auto down = warnings.containing("http://" + url + "/metrics/job/late_gateway");
    ASSERT_EQ(down.size(), 1U) << "one warning per failure streak, naming the URL";
    EXPECT_NE(down[0].find("next push carries"), std::string::npos) << down[0];

    testing::Pushgateway gateway(port);
    ASSERT_TRUE((*histogram)->begin_window("w"));
    advance(0.5);
    ASSERT_TRUE((*histogram)->end_window("w"));
    EXPECT_EQ(warnings.containing("works again").size(), 1U);
    const auto count = find_samples(gateway_samples(gateway), "energy_monitor_gpu_energy_joules_count",
                                    {{"job", "late_gateway"}, {"window", "w"}});
    ASSERT_EQ(count.size(), 1U);
    EXPECT_EQ(count[0].value, 3.0) << "the windows measured while the gateway was down are in the next push";
}

TEST_F(PushedMetricsTest, BadInputIsAClearError) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    auto expect_error = [](const auto& result, ErrorCode code, const std::string& text) {
        ASSERT_FALSE(result) << "expected an error mentioning " << text;
        EXPECT_EQ(result.error().code, code) << result.error().describe();
        EXPECT_NE(result.error().describe().find(text), std::string::npos) << result.error().describe();
    };
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {0}, "http://local host:9091", "j"),
                 ErrorCode::InvalidArgument, "'http://local host:9091' is malformed");
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {0}, "ftp://gateway:9091", "j"), ErrorCode::InvalidArgument,
                 "only http:// and https://");
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {0}, "http://gateway:99999", "j"),
                 ErrorCode::InvalidArgument, "'99999' is not a port");
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {0}, "http://:9091", "j"), ErrorCode::InvalidArgument,
                 "no host");
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {0}, "localhost:9091", ""), ErrorCode::InvalidArgument,
                 "job name is empty");
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {0}, "localhost:9091", "j", {}), ErrorCode::InvalidArgument,
                 "GPU bucket range cannot be empty");
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {0}, "localhost:9091", "j", {100, 50}),
                 ErrorCode::InvalidArgument, "strictly ascending");
    expect_error(EnergyHistogram::open(gpus, nullptr, {}, {7}, "localhost:9091", "j"), ErrorCode::NotFound, "7");
    expect_error(PowerGauge::open(gpus, {7}, 1s, "localhost:9091", "j"), ErrorCode::NotFound, "7");
    expect_error(EnergyCumulativeCounter::open(gpus, nullptr, {}, {0}, 0s, "localhost:9091", "j"),
                 ErrorCode::InvalidArgument, "not positive");
    // A window never begun is named as the user named it, not by the internal key.
    auto histogram = EnergyHistogram::open(gpus, nullptr, {}, {0}, "localhost:9091", "j");
    ASSERT_TRUE(histogram) << histogram.error().describe();
    expect_error((*histogram)->end_window_measured("never"), ErrorCode::NotFound,
                 "No active EnergyHistogram window found for 'never'");
}

// A job or window name that is not UTF-8 would be stored by the Pushgateway,
// which then refuses every later push by anyone (400 "label ... is not
// utf8"): names are refused before anything is pushed, and a window label
// that only reports a command's name is written with U+FFFD.
TEST_F(PushedMetricsTest, NamesThatAreNotUtf8NeverReachTheGateway) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    testing::Pushgateway gateway;
    auto refused = EnergyHistogram::open(gpus, nullptr, {}, {0}, gateway.base_url(), "train\xFF");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().describe().find("the Pushgateway job name 'train\\xff' is not UTF-8"), 0U)
        << refused.error().describe();
    auto histogram = EnergyHistogram::open(gpus, nullptr, {}, {0}, gateway.base_url(), "utf8_test");
    ASSERT_TRUE(histogram) << histogram.error().describe();
    const Status window = (*histogram)->begin_window("w\xFF");
    ASSERT_FALSE(window);
    EXPECT_NE(window.error().message.find("EnergyHistogram window name 'w\\xff' is not UTF-8"), std::string::npos);
    auto gauge = PowerGauge::open(gpus, {0}, 1s, gateway.base_url(), "utf8_test");
    ASSERT_TRUE(gauge) << gauge.error().describe();
    EXPECT_FALSE((*gauge)->begin_window("g\xFF"));

    // The CLI: --job refused before the command runs; a command whose name is
    // not UTF-8 is pushed under its name with U+FFFD.
    const testing::TestDirectory dir;
    const auto command = dir.path() / "true\xFF";
    std::filesystem::create_symlink("/bin/true", command);
    const std::string zeus =
        "env -u ZEUS_SIMULATE -u CUDA_VISIBLE_DEVICES ZEUS_SIM_STATE=" + (dir.path() / "state").string() + " " +
        testing::zeus_cli_path() + " run --simulate --cpus none --push-gateway " + gateway.base_url();
    auto r = testing::capture_separately(zeus + " --job 'bad\xFF' -- touch " + (dir.path() / "ran").string());
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_NE(r.err.find("--job: 'bad\\xff' is not UTF-8"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "ran"));
    r = testing::capture_separately(zeus + " --job utf8_cli -- '" + command.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
    const auto samples = gateway_samples(gateway);
    EXPECT_EQ(find_samples(samples, "energy_monitor_gpu_energy_joules_count",
                           {{"job", "utf8_cli"}, {"window", "true\xEF\xBF\xBD"}, {"index", "0"}})
                  .size(),
              1U);
    // And the gateway still takes everyone's pushes.
    ASSERT_TRUE((*histogram)->begin_window("after"));
    auto m = (*histogram)->end_window_measured("after");
    ASSERT_TRUE(m) << m.error().describe();
    EXPECT_EQ(find_samples(gateway_samples(gateway), "energy_monitor_gpu_energy_joules_count",
                           {{"job", "utf8_test"}, {"window", "after"}})
                  .size(),
              1U);
}

TEST_F(PushedMetricsTest, CumulativeCounterPushesTheEnergyOfTheWholeWindow) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    testing::Pushgateway gateway;
    Warnings warnings;
    auto counter = EnergyCumulativeCounter::open(gpus, nullptr, {}, {0}, 0.25s, gateway.base_url(), "counter_job",
                                                 warnings.sink());
    ASSERT_TRUE(counter) << counter.error().describe();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.8, &load), ZEUS_SIM_OK);
    const double before = truth(0);
    ASSERT_TRUE((*counter)->begin_window("train"));
    EXPECT_EQ((*counter)->begin_window("train").error().code, ErrorCode::InvalidState);
    std::this_thread::sleep_for(600ms);
    // Pushed while the window is open: a counter at the gateway already.
    const auto mid = find_samples(gateway_samples(gateway), "energy_monitor_gpu_energy_joules_total",
                                  {{"job", "counter_job"}, {"window", "train"}, {"index", "0"}});
    ASSERT_EQ(mid.size(), 1U);
    std::this_thread::sleep_for(600ms);
    const double shortest_end = truth(0);
    ASSERT_TRUE((*counter)->end_window("train"));
    const double after = truth(0);
    zeusSimLoadEnd(load);
    EXPECT_EQ((*counter)->end_window("train").error().code, ErrorCode::NotFound);

    const auto families = (*counter)->families();
    ASSERT_EQ(families.size(), 1U);
    ASSERT_EQ(families[0].samples.size(), 1U);
    const double counted = families[0].samples[0].value;
    const auto pushed = find_samples(gateway_samples(gateway), "energy_monitor_gpu_energy_joules_total",
                                     {{"job", "counter_job"}, {"window", "train"}, {"index", "0"}});
    ASSERT_EQ(pushed.size(), 1U);
    EXPECT_EQ(pushed[0].value, counted) << "end_window pushes the last period too";
    EXPECT_GE(pushed[0].value, mid[0].value);
    // The counter covers begin_window..end_window: at most the energy between
    // the truth read before begin and after end (plus one refresh period of
    // power, 0.1 s × 400 W, for counter interpolation); at least what was
    // drawn from begin to the start of end (begin_window opens the first
    // period itself), less 10 % for the instants between two periods on a
    // loaded machine.
    EXPECT_LE(counted, after - before + 40);
    EXPECT_GE(counted, 0.9 * (shortest_end - before) - 40);
    EXPECT_TRUE(warnings.containing("push").empty());
}

TEST_F(PushedMetricsTest, PowerGaugePushesTheLatestPower) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}]})");
    Gpus gpus = Gpus::open(simulated());
    testing::Pushgateway gateway;
    auto gauge = PowerGauge::open(gpus, {0}, 0.1s, gateway.base_url(), "gauge_job");
    ASSERT_TRUE(gauge) << gauge.error().describe();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(300ms);
    ASSERT_TRUE((*gauge)->begin_window("serve"));
    EXPECT_EQ((*gauge)->begin_window("serve").error().describe().find("already exists") != std::string::npos, true);
    std::this_thread::sleep_for(700ms);
    double true_watts = 0;
    ASSERT_EQ(zeusSimTruePower(0, &true_watts), ZEUS_SIM_OK);
    const auto pushed = find_samples(gateway_samples(gateway), "power_monitor_gpu_power_watts",
                                     {{"job", "gauge_job"}, {"window", "serve"}, {"index", "0"}});
    ASSERT_TRUE((*gauge)->end_window("serve"));
    zeusSimLoadEnd(load);
    ASSERT_EQ(pushed.size(), 1U);
    // Steady full load: the pushed reading is the sensor's (noise 0.5 W σ,
    // leakage drift well under 5 % over a second).
    EXPECT_NEAR(pushed[0].value, true_watts, 0.05 * true_watts);
}

}  // namespace
}  // namespace zeus::metrics
