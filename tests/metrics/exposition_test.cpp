// The one exposition writer: format, escaping, label order, never NaN,
// counters named _total, OpenMetrics when the scraper asks for it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "prometheus_servers.hpp"
#include "zeus/metrics/exposition.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::metrics {
namespace {

MetricFamily counter() {
    return {"zeus_gpu_energy_joules", "Energy \\ drawn\nsince load", MetricType::Counter, "joules",
            {{{{"gpu", "0"}, {"name", "NVIDIA \"A100\"\nx\\y"}}, 1234.5},
             {{{"gpu", "1"}, {"name", "b"}}, std::numeric_limits<double>::quiet_NaN()},
             {{{"gpu", "2"}, {"name", "c"}}, std::numeric_limits<double>::infinity()}},
            {}};
}

TEST(Exposition, PrometheusTextNamesCountersWithTotalAndEscapes) {
    const std::string text = render({counter()}, ExpositionFormat::PrometheusText);
    EXPECT_EQ(text,
              "# HELP zeus_gpu_energy_joules_total Energy \\\\ drawn\\nsince load\n"
              "# TYPE zeus_gpu_energy_joules_total counter\n"
              "zeus_gpu_energy_joules_total{gpu=\"0\",name=\"NVIDIA \\\"A100\\\"\\nx\\\\y\"} 1234.5\n");
    // The parser the tests use reads the escaped value back exactly.
    const auto samples = testing::parse_exposition(text);
    ASSERT_EQ(samples.size(), 1U);
    EXPECT_EQ(samples[0].labels.at("name"), "NVIDIA \"A100\"\nx\\y");
}

// Both formats are UTF-8: one byte that is not (a GPU name, a window named
// after a command) would make Prometheus drop the whole scrape and the
// Pushgateway refuse the push. Such bytes become U+FFFD.
TEST(Exposition, BytesThatAreNotUtf8BecomeReplacementCharacters) {
    const MetricFamily family{"zeus_window_energy_joules",
                              "Energy of \xFF windows",
                              MetricType::Gauge,
                              "joules",
                              {{{{"window", "run\xFF\xC3"}, {"name", "caf\xC3\xA9"}}, 1.0}},
                              {}};
    for (auto format : {ExpositionFormat::PrometheusText, ExpositionFormat::OpenMetrics}) {
        const std::string text = render({family}, format);
        EXPECT_TRUE(is_utf8(text)) << text;
        const auto samples = testing::parse_exposition(text);
        ASSERT_EQ(samples.size(), 1U) << text;
        EXPECT_EQ(samples[0].labels.at("window"), "run\xEF\xBF\xBD\xEF\xBF\xBD");
        EXPECT_EQ(samples[0].labels.at("name"), "caf\xC3\xA9");
        EXPECT_NE(text.find("Energy of \xEF\xBF\xBD windows"), std::string::npos) << text;
    }
}

TEST(Exposition, NeverWritesNaNOrInfiniteSamples) {
    for (auto format : {ExpositionFormat::PrometheusText, ExpositionFormat::OpenMetrics}) {
        const std::string text = render({counter()}, format);
        EXPECT_EQ(text.find("NaN"), std::string::npos) << text;
        EXPECT_EQ(text.find("Inf"), std::string::npos) << text;
        EXPECT_EQ(text.find("gpu=\"1\""), std::string::npos) << text;
    }
}

TEST(Exposition, OpenMetricsHasUnitFamilyNameAndEof) {
    const std::string text = render({counter()}, ExpositionFormat::OpenMetrics);
    EXPECT_EQ(text,
              "# HELP zeus_gpu_energy_joules Energy \\\\ drawn\\nsince load\n"
              "# TYPE zeus_gpu_energy_joules counter\n"
              "# UNIT zeus_gpu_energy_joules joules\n"
              "zeus_gpu_energy_joules_total{gpu=\"0\",name=\"NVIDIA \\\"A100\\\"\\nx\\\\y\"} 1234.5\n"
              "# EOF\n");
}

TEST(Exposition, LabelsKeepTheProducersOrder) {
    MetricFamily gauge{"g", "h", MetricType::Gauge, "", {{{{"z", "1"}, {"a", "2"}}, 3}}, {}};
    EXPECT_NE(render({gauge}, ExpositionFormat::PrometheusText).find("g{z=\"1\",a=\"2\"} 3.0\n"), std::string::npos);
}

TEST(Exposition, HistogramBucketsAreCumulativeWithInf) {
    MetricFamily h{"energy_monitor_gpu_energy_joules", "GPU energy consumption", MetricType::Histogram, "joules",
                   {}, {{{{"window", "w"}, {"index", "0"}}, {{50.0, 1}, {100.0, 3}}, 260.5, 4}}};
    const std::string text = render({h}, ExpositionFormat::PrometheusText);
    EXPECT_EQ(text,
              "# HELP energy_monitor_gpu_energy_joules GPU energy consumption\n"
              "# TYPE energy_monitor_gpu_energy_joules histogram\n"
              "energy_monitor_gpu_energy_joules_bucket{window=\"w\",index=\"0\",le=\"50.0\"} 1.0\n"
              "energy_monitor_gpu_energy_joules_bucket{window=\"w\",index=\"0\",le=\"100.0\"} 3.0\n"
              "energy_monitor_gpu_energy_joules_bucket{window=\"w\",index=\"0\",le=\"+Inf\"} 4.0\n"
              "energy_monitor_gpu_energy_joules_sum{window=\"w\",index=\"0\"} 260.5\n"
              "energy_monitor_gpu_energy_joules_count{window=\"w\",index=\"0\"} 4.0\n");
}

TEST(Exposition, NegotiatesOpenMetricsOnlyWhenPreferred) {
    // What Prometheus 2.42 sends.
    EXPECT_EQ(negotiate_format("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                               "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
              ExpositionFormat::OpenMetrics);
    EXPECT_EQ(negotiate_format(""), ExpositionFormat::PrometheusText);
    EXPECT_EQ(negotiate_format("*/*"), ExpositionFormat::PrometheusText);
    EXPECT_EQ(negotiate_format("text/plain;version=0.0.4"), ExpositionFormat::PrometheusText);
    EXPECT_EQ(negotiate_format("text/plain, application/openmetrics-text;q=0.3"), ExpositionFormat::PrometheusText);
    EXPECT_EQ(negotiate_format("application/openmetrics-text; q=0"), ExpositionFormat::PrometheusText);
    EXPECT_EQ(negotiate_format("APPLICATION/OPENMETRICS-TEXT"), ExpositionFormat::OpenMetrics);
    EXPECT_EQ(negotiate_format("application/openmetrics-text;q=oops"), ExpositionFormat::PrometheusText);
}

TEST(Exposition, FormatsValuesToReadBackExactly) {
    EXPECT_EQ(format_value(50), "50.0");
    EXPECT_EQ(format_value(0.1), "0.1");
    EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
    for (double v : {1e-9, 123456789.123, 1e21, 3.14159}) EXPECT_EQ(std::stod(format_value(v)), v);
}

TEST(Exposition, ValidatesNames) {
    EXPECT_TRUE(valid_metric_name("zeus_gpu:energy"));
    EXPECT_FALSE(valid_metric_name("1abc"));
    EXPECT_FALSE(valid_metric_name("a-b"));
    EXPECT_TRUE(valid_label_name("_gpu1"));
    EXPECT_FALSE(valid_label_name("a:b"));
}

}  // namespace
}  // namespace zeus::metrics
