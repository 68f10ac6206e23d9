#include "zeus/metrics/exposition.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "zeus/platform/utf8.hpp"

namespace zeus::metrics {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    }
    return true;
}

// The q-value of one media range ("type/subtype;param=v;q=0.5"); 1 when absent, 0 when malformed.
double quality(std::string_view params) {
    while (!params.empty()) {
        const auto semi = params.find(';');
        std::string_view param = trim(params.substr(0, semi));
        params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
        if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
            const std::string text(trim(param.substr(2)));
            char* end = nullptr;
            const double q = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !(q >= 0 && q <= 1)) return 0;
            return q;
        }
    }
    return 1;
}

// Prometheus text: HELP escapes backslash and newline; label values also the double quote.
// OpenMetrics escapes all three everywhere. Both formats are UTF-8, and one
// byte that is not makes Prometheus drop the whole scrape (and the Pushgateway
// refuse the push): such bytes become U+FFFD.
void append_escaped(std::string& out, std::string_view raw, bool escape_quote) {
    const std::string text = to_utf8(raw);
    for (const char c : text) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '"':
                if (escape_quote) {
                    out += "\\\"";
                } else {
                    out += c;
                }
                break;
            default: out += c;
        }
    }
}

void append_labels(std::string& out, const Labels& labels, const Label* extra = nullptr) {
    if (labels.empty() && extra == nullptr) return;
    out += '{';
    bool first = true;
    auto one = [&](const Label& label) {
        if (!first) out += ',';
        first = false;
        out += label.name;
        out += "=\"";
        append_escaped(out, label.value, true);
        out += '"';
    };
    for (const auto& label : labels) one(label);
    if (extra != nullptr) one(*extra);
    out += '}';
}

void append_sample(std::string& out, std::string_view name, const Labels& labels, double value,
                   const Label* extra = nullptr) {
    out += name;
    append_labels(out, labels, extra);
    out += ' ';
    out += format_value(value);
    out += '\n';
}

std::string_view type_name(MetricType type) {
    switch (type) {
        case MetricType::Counter: return "counter";
        case MetricType::Gauge: return "gauge";
        case MetricType::Histogram: return "histogram";
    }
    return "untyped";
}

}  // namespace

std::string_view content_type(ExpositionFormat format) {
    return format == ExpositionFormat::OpenMetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                                   : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat negotiate_format(std::string_view accept_header) {
    double openmetrics = 0;
    double text = 0;
    while (!accept_header.empty()) {
        const auto comma = accept_header.find(',');
        const std::string_view range = accept_header.substr(0, comma);
        accept_header = comma == std::string_view::npos ? std::string_view{} : accept_header.substr(comma + 1);
        const auto semi = range.find(';');
        const std::string_view type = trim(range.substr(0, semi));
        const double q = quality(semi == std::string_view::npos ? std::string_view{} : range.substr(semi + 1));
        if (iequals(type, "application/openmetrics-text")) {
            openmetrics = std::max(openmetrics, q);
        } else if (iequals(type, "text/plain") || iequals(type, "text/*") || iequals(type, "*/*")) {
            text = std::max(text, q);
        }
    }
    return openmetrics > 0 && openmetrics > text ? ExpositionFormat::OpenMetrics : ExpositionFormat::PrometheusText;
}

std::string format_value(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    std::string text(buffer, result.ptr);
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
}

bool valid_metric_name(std::string_view name) {
    if (name.empty()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        const bool ok = std::isalpha(c) || c == '_' || c == ':' || (i > 0 && std::isdigit(c));
        if (!ok) return false;
    }
    return true;
}

bool valid_label_name(std::string_view name) {
    if (name.empty()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        const bool ok = std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c));
        if (!ok) return false;
    }
    return true;
}

std::string render(const std::vector<MetricFamily>& families, ExpositionFormat format) {
    const bool om = format == ExpositionFormat::OpenMetrics;
    std::string out;
    out.reserve(256 * families.size());
    for (const auto& family : families) {
        const bool counter = family.type == MetricType::Counter;
        // OpenMetrics names the family without _total; the Prometheus text
        // format names it as its samples are named.
        const std::string sample_name = counter ? family.name + "_total" : family.name;
        const std::string& family_name = om ? family.name : sample_name;
        out += "# HELP ";
        out += family_name;
        out += ' ';
        append_escaped(out, family.help, om);
        out += "\n# TYPE ";
        out += family_name;
        out += ' ';
        out += type_name(family.type);
        out += '\n';
        if (om && !family.unit.empty()) out += fmt::format("# UNIT {} {}\n", family.name, family.unit);
        for (const auto& sample : family.samples) {
            if (!std::isfinite(sample.value)) continue;
            append_sample(out, sample_name, sample.labels, sample.value);
        }
        for (const auto& histogram : family.histograms) {
            if (!std::isfinite(histogram.sum)) continue;
            const std::string bucket = family.name + "_bucket";
            for (const auto& [bound, count] : histogram.buckets) {
                if (std::isnan(bound)) continue;
                const Label le{"le", format_value(bound)};
                append_sample(out, bucket, histogram.labels, static_cast<double>(count), &le);
            }
            const Label inf{"le", "+Inf"};
            append_sample(out, bucket, histogram.labels, static_cast<double>(histogram.count), &inf);
            append_sample(out, family.name + "_sum", histogram.labels, histogram.sum);
            append_sample(out, family.name + "_count", histogram.labels, static_cast<double>(histogram.count));
        }
    }
    if (om) out += "# EOF\n";
    return out;
}

}  // namespace zeus::metrics
