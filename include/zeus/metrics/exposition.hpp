// Metrics as data, and the one writer that turns them into what a scraper
// or a Pushgateway reads: the Prometheus text format (0.0.4) or, when the
// scraper's Accept header asks for it, OpenMetrics 1.0. Every exporter and
// pusher in the project renders through here, so escaping, label order and
// the rules "never NaN" and "counters end in _total" live in one place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zeus::metrics {

enum class MetricType { Counter, Gauge, Histogram };

struct Label {
    std::string name;
    std::string value;
};
// Written in the order given: producers keep one order per family, so a
// series' identity never changes from scrape to scrape.
using Labels = std::vector<Label>;

struct Sample {
    Labels labels;
    double value = 0;
};

struct HistogramSample {
    Labels labels;
    // Upper bounds, ascending, each with the cumulative count of observations
    // at or below it; the +Inf bucket is written from `count`.
    std::vector<std::pair<double, std::uint64_t>> buckets;
    double sum = 0;
    std::uint64_t count = 0;
};

struct MetricFamily {
    // For counters the name without "_total": the writer appends it.
    std::string name;
    std::string help;
    MetricType type = MetricType::Gauge;
    // OpenMetrics "# UNIT" ("joules", "watts"); must end the name. Empty: none.
    std::string unit;
    std::vector<Sample> samples;              // counters and gauges
    std::vector<HistogramSample> histograms;  // histograms
};

enum class ExpositionFormat { PrometheusText, OpenMetrics };

// The Content-Type header that goes with a body in `format`.
[[nodiscard]] std::string_view content_type(ExpositionFormat format);
// OpenMetrics when the Accept header prefers application/openmetrics-text
// (by q-value) over text/plain; the Prometheus text format otherwise,
// including for an empty or unparsable header.
[[nodiscard]] ExpositionFormat negotiate_format(std::string_view accept_header);

// Renders `families` in `format`. A sample whose value is NaN or infinite is
// left out (a scraper's rate() breaks on NaN; a missing sample is a gap),
// and a family left without samples is written without any.
[[nodiscard]] std::string render(const std::vector<MetricFamily>& families, ExpositionFormat format);

// [a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*, as Prometheus requires.
[[nodiscard]] bool valid_metric_name(std::string_view name);
[[nodiscard]] bool valid_label_name(std::string_view name);

// How a sample value and a bucket bound are written: the shortest text that
// reads back as the same double, with ".0" on whole numbers (as the Python
// client writes bucket bounds, le="50.0"), and +Inf/-Inf.
[[nodiscard]] std::string format_value(double value);

}  // namespace zeus::metrics
