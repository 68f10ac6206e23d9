#include "perseus_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "zeus/platform/python_float.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::cli {

namespace {

const char* kind_name(lowtime::InstructionKind kind) {
    return kind == lowtime::InstructionKind::kForward ? "forward" : "backward";
}

std::string model_key(const lowtime::StageInstruction& key) {
    return std::to_string(key.first) + "," + kind_name(key.second);
}

}  // namespace

std::map<lowtime::StageInstruction, lowtime::ExponentialCoefficients> parse_cost_models_json(
    const std::string& text, const std::string& source_name) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(source_name + ": not JSON: " + e.what());
    }
    if (doc.contains("cost_models")) doc = doc["cost_models"];
    if (!doc.is_object()) throw std::invalid_argument(source_name + ": expected {\"STAGE,INSTRUCTION\": {\"a\":..,\"b\":..,\"c\":..}}");
    std::map<lowtime::StageInstruction, lowtime::ExponentialCoefficients> out;
    for (const auto& [key, value] : doc.items()) {
        const auto comma = key.find(',');
        const std::string kind = comma == std::string::npos ? "" : key.substr(comma + 1);
        if (comma == std::string::npos || (kind != "forward" && kind != "backward") || !value.is_object() ||
            !value.contains("a") || !value.contains("b") || !value.contains("c") || !value["a"].is_number() ||
            !value["b"].is_number() || !value["c"].is_number())
            throw std::invalid_argument(source_name + ": entry '" + key +
                                        "' must be \"STAGE,forward|backward\": {\"a\": number, \"b\": number, \"c\": number}");
        std::size_t stage = 0;
        try {
            stage = std::stoul(key.substr(0, comma));
        } catch (const std::exception&) {
            throw std::invalid_argument(source_name + ": entry '" + key + "' has no stage number");
        }
        out[{stage, kind == "forward" ? lowtime::InstructionKind::kForward : lowtime::InstructionKind::kBackward}] = {
            value["a"].get<double>(), value["b"].get<double>(), value["c"].get<double>()};
    }
    return out;
}

std::string frontier_json(const lowtime::PerseusPlan& plan, const std::vector<std::size_t>& written) {
    nlohmann::json doc;
    doc["stages"] = plan.stages;
    doc["microbatches"] = plan.options.microbatches;
    doc["unit_time"] = plan.options.unit_time;
    doc["p2p_power"] = plan.options.p2p_power;
    doc["stop_reason"] = std::string(lowtime::to_string(plan.frontier.stop_reason()));
    doc["min_quant_time"] = plan.frontier.min_quant_time();
    auto& models = doc["cost_models"] = nlohmann::json::object();
    for (const auto& [key, model] : plan.models) {
        auto& m = models[model_key(key)];
        m["a"] = model.coefficients.a;
        m["b"] = model.coefficients.b;
        m["c"] = model.coefficients.c;
        m["given"] = model.overridden;
        m["rms_error"] = model.rms_error;
        m["poor_fit"] = model.poor_fit;
        for (const auto& o : model.spec->options.options())
            m["options"].push_back({{"frequency", o.knob}, {"quant_time", o.quant_time()}, {"effective_energy", o.cost}});
    }
    auto& points = doc["points"] = nlohmann::json::array();
    for (std::size_t i = 0; i < plan.frontier.points().size(); ++i) {
        const auto& p = plan.frontier.points()[i];
        points.push_back({{"iteration", p.iteration},
                          {"quant_time", p.quant_time},
                          {"time", p.real_time},
                          {"effective_energy", p.cost},
                          {"energy", plan.energy_with_p2p(i)},
                          {"cost_change", p.cost_change},
                          {"schedule", std::binary_search(written.begin(), written.end(), i)
                                           ? nlohmann::json(fmt::format("schedule_{:05d}.json", i - 1))
                                           : nlohmann::json(nullptr)}});
    }
    return json_text(doc, 1) + "\n";
}

std::string freqs_pipeline_python(const lowtime::PerseusPlan& plan, std::size_t point) {
    const auto& p = plan.frontier.points().at(point);
    std::string out = "[\n";
    for (const auto& stage : plan.schedule_at(point)) {
        out += "[";
        for (std::size_t k = 0; k < stage.size(); ++k)
            out += fmt::format("{}('{}', {})", k ? ", " : "", kind_name(stage[k].first), stage[k].second);
        out += "],\n";
    }
    out += "]\n";
    const std::string prefix = fmt::format("# Iteration {} ", point - 1);
    out += prefix + "cost change: " + python_float_repr(p.cost_change) + "\n";
    out += prefix + "total cost: " + python_float_repr(p.cost) + "\n";
    out += prefix + "total cost with P2P: " + python_float_repr(plan.energy_with_p2p(point)) + "\n";
    return out;
}

std::string frontier_svg(const lowtime::PerseusPlan& plan) {
    const auto& points = plan.frontier.points();
    double t0 = points.front().real_time, t1 = t0, e0 = plan.energy_with_p2p(0), e1 = e0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        t0 = std::min(t0, points[i].real_time);
        t1 = std::max(t1, points[i].real_time);
        e0 = std::min(e0, plan.energy_with_p2p(i));
        e1 = std::max(e1, plan.energy_with_p2p(i));
    }
    if (t1 == t0) t1 = t0 + plan.options.unit_time;
    if (e1 == e0) e1 = e0 + 1.0;
    constexpr double kW = 640, kH = 420, kLeft = 80, kRight = 20, kTop = 30, kBottom = 60;
    auto x = [&](double t) { return kLeft + (t - t0) / (t1 - t0) * (kW - kLeft - kRight); };
    auto y = [&](double e) { return kH - kBottom - (e - e0) / (e1 - e0) * (kH - kTop - kBottom); };
    std::ostringstream svg;
    svg << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">)",
                       kW, kH)
        << "\n";
    svg << fmt::format(R"(<text x="{}" y="18" text-anchor="middle">Perseus time-energy frontier ({} stages, {} microbatches)</text>)",
                       kW / 2, plan.stages, plan.options.microbatches)
        << "\n";
    svg << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="black"/><line x1="{0}" y1="{1}" x2="{0}" y2="{3}" stroke="black"/>)",
                       kLeft, kH - kBottom, kW - kRight, kTop)
        << "\n";
    for (int k = 0; k <= 4; ++k) {
        const double t = t0 + (t1 - t0) * k / 4, e = e0 + (e1 - e0) * k / 4;
        svg << fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{:.4g}</text>)", x(t), kH - kBottom + 18, t) << "\n";
        svg << fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{:.6g}</text>)", kLeft - 6, y(e) + 4, e) << "\n";
    }
    svg << fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">iteration time (s)</text>)", (kLeft + kW - kRight) / 2, kH - 20)
        << "\n";
    svg << fmt::format(R"svg(<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">energy per iteration incl. P2P blocking (J)</text>)svg",
                       (kTop + kH - kBottom) / 2, (kTop + kH - kBottom) / 2)
        << "\n";
    svg << R"(<polyline fill="none" stroke="#1f77b4" stroke-width="2" points=")";
    for (std::size_t i = 0; i < points.size(); ++i)
        svg << fmt::format("{}{:.2f},{:.2f}", i ? " " : "", x(points[i].real_time), y(plan.energy_with_p2p(i)));
    svg << "\"/>\n</svg>\n";
    return svg.str();
}

}  // namespace zeus::cli
