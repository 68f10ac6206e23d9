#include "profile_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace zeus::cli {
namespace {

// Plot geometry (pixels): one panel per report.
constexpr double kPanelWidth = 480;
constexpr double kPanelHeight = 320;
constexpr double kLeft = 70;  // room for the energy axis labels
constexpr double kRight = 20;
constexpr double kTop = 40;  // the title
constexpr double kBottom = 50;  // the duration axis labels

std::string xml_escape(const std::string& s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

double swept_value(const profile::SweepReport& r, const profile::SweepResult& e) {
    return r.sweep_param.first == "cooldown_duration" ? e.cooldown_duration : e.measurement_duration;
}

// Maps [lo, hi] onto [a, b]; a degenerate range maps to the middle.
double scale(double v, double lo, double hi, double a, double b) {
    if (!(hi > lo)) return (a + b) / 2;
    return a + (v - lo) / (hi - lo) * (b - a);
}

std::string panel(const profile::SweepReport& r, double x0) {
    std::string s;
    const double plot_left = x0 + kLeft;
    const double plot_right = x0 + kPanelWidth - kRight;
    const double plot_top = kTop;
    const double plot_bottom = kPanelHeight - kBottom;
    double xmin = 0;
    double xmax = 0;
    double ymin = 0;
    double ymax = 0;
    bool first = true;
    for (const auto& e : r.entries) {
        const double x = swept_value(r, e);
        const double lo = e.energy_mean - e.energy_std;
        const double hi = e.energy_mean + e.energy_std;
        xmin = first ? x : std::min(xmin, x);
        xmax = first ? x : std::max(xmax, x);
        ymin = first ? lo : std::min(ymin, lo);
        ymax = first ? hi : std::max(ymax, hi);
        first = false;
    }
    // A margin of 5 % so that points and bars stay off the frame.
    const double ypad = (ymax > ymin ? ymax - ymin : std::max(std::abs(ymax), 1.0)) * 0.05;
    ymin -= ypad;
    ymax += ypad;
    s += fmt::format(R"(  <g class="panel" data-sweep="{}">)" "\n", xml_escape(r.sweep_param.first));
    s += fmt::format(R"(    <text x="{:.1f}" y="20" text-anchor="middle" font-size="14">{} (fixed {}={:.1f} s)</text>)"
                     "\n",
                     x0 + kPanelWidth / 2, xml_escape(r.sweep_param.first), xml_escape(r.fixed_param.first),
                     r.fixed_param.second);
    s += fmt::format(R"(    <rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="#888"/>)"
                     "\n",
                     plot_left, plot_top, plot_right - plot_left, plot_bottom - plot_top);
    s += fmt::format(R"(    <text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="12">{} (s)</text>)" "\n",
                     (plot_left + plot_right) / 2, kPanelHeight - 12, xml_escape(r.sweep_param.first));
    s += fmt::format(R"(    <text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end">{:.4f}</text>)" "\n",
                     plot_left - 4, plot_top + 4, ymax);
    s += fmt::format(R"(    <text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end">{:.4f}</text>)" "\n",
                     plot_left - 4, plot_bottom, ymin);
    s += fmt::format(R"svg(    <text x="{:.1f}" y="{:.1f}" font-size="12" transform="rotate(-90 {:.1f} {:.1f})" )svg"
                     R"(text-anchor="middle">J per iteration</text>)" "\n",
                     x0 + 14, (plot_top + plot_bottom) / 2, x0 + 14, (plot_top + plot_bottom) / 2);
    const double inner_left = plot_left + 20;
    const double inner_right = plot_right - 20;
    for (const auto& e : r.entries) {
        const double v = swept_value(r, e);
        const double x = scale(v, xmin, xmax, inner_left, inner_right);
        const double y = scale(e.energy_mean, ymin, ymax, plot_bottom, plot_top);
        const double y_hi = scale(e.energy_mean + e.energy_std, ymin, ymax, plot_bottom, plot_top);
        const double y_lo = scale(e.energy_mean - e.energy_std, ymin, ymax, plot_bottom, plot_top);
        const char* color = e.is_valid ? "#1a7f37" : "#cf222e";
        s += fmt::format(R"(    <line class="std" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}"/>)" "\n",
                         x, y_hi, x, y_lo, color);
        s += fmt::format(
            R"(    <circle class="mean" cx="{:.2f}" cy="{:.2f}" r="4" fill="{}" stroke="{}" data-value="{}" )"
            R"(data-mean="{}" data-std="{}" data-valid="{}"><title>{:.1f} s: {:.4f} ± {:.4f} J [{}]</title></circle>)"
            "\n",
            x, y, e.is_valid ? color : "white", color, v, e.energy_mean, e.energy_std, e.is_valid, v, e.energy_mean,
            e.energy_std, e.is_valid ? "VALID" : "INVALID");
        s += fmt::format(R"(    <text x="{:.2f}" y="{:.1f}" font-size="11" text-anchor="middle">{:.1f}</text>)" "\n",
                         x, plot_bottom + 16, v);
    }
    s += "  </g>\n";
    return s;
}

}  // namespace

nlohmann::json trial_json(const profile::TrialResult& t) {
    return {{"energy_per_iter", t.energy_per_iter},       {"time_per_iter", t.time_per_iter},
            {"total_energy", t.total_energy},             {"total_time", t.total_time},
            {"iterations", t.iterations},                 {"temperature_before", t.temperature_before},
            {"temperature_after", t.temperature_after}};
}

nlohmann::json report_json(const profile::SweepReport& report) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& e : report.entries) {
        nlohmann::json trials = nlohmann::json::array();
        for (const auto& t : e.trials) trials.push_back(trial_json(t));
        entries.push_back({{"measurement_duration", e.measurement_duration},
                           {"cooldown_duration", e.cooldown_duration},
                           {"energy_mean", e.energy_mean},
                           {"energy_std", e.energy_std},
                           {"avg_temperature_before", e.avg_temperature_before},
                           {"avg_temperature_after", e.avg_temperature_after},
                           {"avg_total_time", e.avg_total_time},
                           {"avg_total_energy", e.avg_total_energy},
                           {"is_valid", e.is_valid},
                           {"trials", std::move(trials)}});
    }
    return {{"sweep_param", {{"name", report.sweep_param.first}, {"values", report.sweep_param.second}}},
            {"fixed_param", {{"name", report.fixed_param.first}, {"value", report.fixed_param.second}}},
            {"entries", std::move(entries)}};
}

nlohmann::json reports_json(const std::vector<profile::SweepReport>& reports,
                            const std::optional<profile::Recommendation>& recommendation, double threshold,
                            bool simulated) {
    nlohmann::json out;
    out["reports"] = nlohmann::json::array();
    for (const auto& r : reports) out["reports"].push_back(report_json(r));
    if (recommendation) {
        out["recommendation"] = {{"measurement_duration", recommendation->measurement_duration},
                                 {"cooldown_duration", recommendation->cooldown_duration},
                                 {"wall_time_per_measurement", recommendation->wall_time_per_measurement},
                                 {"window_time", recommendation->window_time},
                                 {"warmup_time", recommendation->warmup_time}};
    } else {
        out["recommendation"] = nullptr;
    }
    out["trial_stddev_threshold"] = threshold;
    out["simulated"] = simulated;
    return out;
}

std::string render_svg(const std::vector<profile::SweepReport>& reports, double threshold) {
    const double width = kPanelWidth * static_cast<double>(std::max<std::size_t>(reports.size(), 1));
    std::string s = fmt::format(
        R"(<?xml version="1.0" encoding="UTF-8"?>)" "\n"
        R"(<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{:.0f}" height="{:.0f}" )"
        R"(viewBox="0 0 {:.0f} {:.0f}" font-family="sans-serif">)" "\n"
        R"(  <desc>zeus profile: energy per iteration, mean ± sample standard deviation per swept value; )"
        R"(filled points are VALID (std &lt; {} J), hollow ones INVALID</desc>)" "\n"
        R"(  <rect width="100%" height="100%" fill="white"/>)" "\n",
        width, kPanelHeight, width, kPanelHeight, threshold);
    for (std::size_t i = 0; i < reports.size(); ++i) {
        if (reports[i].entries.empty()) continue;
        s += panel(reports[i], kPanelWidth * static_cast<double>(i));
    }
    s += "</svg>\n";
    return s;
}

std::string clock_text(double seconds) {
    const auto total = static_cast<long long>(std::llround(std::max(0.0, seconds)));
    const long long h = total / 3600;
    const long long m = (total / 60) % 60;
    const long long s = total % 60;
    return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

std::string progress_line(const profile::ProgressEvent& e) {
    // Before the sweeps are planned (calibrating), there is no count and no
    // ETA to show: "[0/0] ... ETA 0:00" would promise the end.
    if (e.trials_total == 0) return fmt::format("[...] {}  elapsed {}", e.message, clock_text(e.elapsed_s));
    const int width = static_cast<int>(std::to_string(e.trials_total).size());
    return fmt::format("[{:>{}}/{}] {}  elapsed {}  ETA {}", e.trials_done, width, e.trials_total, e.message,
                       clock_text(e.elapsed_s), clock_text(e.remaining_s));
}

}  // namespace zeus::cli
