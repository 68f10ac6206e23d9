#include "zeus/optimizer/power_limit_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "zeus/platform/utf8.hpp"

namespace zeus::optimizer {
namespace {

double watts(Milliwatts limit) { return quantity_cast<Watts>(limit).count(); }

const PowerLimitRow& top_row(const std::vector<PowerLimitRow>& rows) {
    return *std::max_element(rows.begin(), rows.end(),
                             [](const auto& a, const auto& b) { return a.power_limit < b.power_limit; });
}

const PowerLimitRow* row_at(const std::vector<PowerLimitRow>& rows, Milliwatts limit) {
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.power_limit == limit; });
    return it == rows.end() ? nullptr : &*it;
}

// + 0.0 turns -0.0 into 0.0: no "-0.0%" for the maximum limit itself.
std::string percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100.0 + 0.0); }

}  // namespace

std::vector<SelectorPtr> standard_selectors() {
    return {time_selector(), energy_selector(), zeus_cost(0.5).value(), max_slowdown_constraint(1.1).value()};
}

Result<PowerLimitReport> make_power_limit_report(const std::vector<PowerLimitMeasurement>& measurements,
                                                 const std::vector<SelectorPtr>& selectors,
                                                 const SelectionContext& context,
                                                 std::optional<std::size_t> profile_steps) {
    if (measurements.empty()) {
        return Error{ErrorCode::NoData, "no power limit has been profiled yet",
                     "ask for the report once the optimizer has measured at least one limit", 0};
    }
    PowerLimitReport report;
    report.world_size = context.world_size;
    report.profile_steps = profile_steps;
    for (const auto& m : measurements) {
        PowerLimitRow row{m.power_limit, m.time, m.energy, m.energy / m.time, std::nullopt, std::nullopt};
        if (profile_steps) {
            const auto steps = static_cast<double>(*profile_steps);
            row.time_per_step = m.time / steps;
            row.energy_per_step = Joules(m.energy.count() / steps);
        }
        report.rows.push_back(row);
    }
    const PowerLimitRow& top = top_row(report.rows);
    for (std::size_t k = 0; k < selectors.size(); ++k) {
        auto chosen = selectors[k]->select(measurements, context);
        if (!chosen) return chosen.error();
        const PowerLimitRow* row = row_at(report.rows, *chosen);
        SelectorChoice choice{selectors[k]->name(), *chosen, 0.0, 0.0, k == 0};
        if (row != nullptr) {
            choice.energy_saving = 1.0 - row->energy.count() / top.energy.count();
            choice.slowdown = row->time.count() / top.time.count() - 1.0;
        }
        report.choices.push_back(std::move(choice));
    }
    return report;
}

std::string PowerLimitReport::to_string() const {
    std::string out = fmt::format("Power-limit profile: {} GPU{}{}\n", world_size, world_size == 1 ? "" : "s",
                                  profile_steps ? fmt::format(", {} steps per limit", *profile_steps) : "");
    if (rows.empty()) return out;
    const bool per_step = profile_steps.has_value();
    out += fmt::format("{:>9}  {:>12}  {:>13}  {:>10}  {:>11}  {:>13}\n", "limit", per_step ? "time/step" : "time",
                       per_step ? "energy/step" : "energy", "avg power", "time vs max", "energy vs max");
    const PowerLimitRow& top = top_row(rows);
    for (const auto& r : rows) {
        const double time = per_step ? r.time_per_step->count() : r.time.count();
        const double energy = per_step ? r.energy_per_step->count() : r.energy.count();
        out += fmt::format("{:>7g} W  {:>10.4f} s  {:>11.3f} J  {:>8.1f} W  {:>11}  {:>13}\n", watts(r.power_limit),
                           time, energy, r.average_power.count(), percent(r.time.count() / top.time.count() - 1.0),
                           percent(r.energy.count() / top.energy.count() - 1.0));
    }
    std::size_t width = 0;
    for (const auto& c : choices) width = std::max(width, c.selector.size());
    if (!choices.empty()) out += "Chosen limits (against the maximum limit):\n";
    for (const auto& c : choices) {
        out += fmt::format("{} {:<{}}  {:>7g} W  saves {:.1f}% energy, {:.1f}% {}\n", c.in_use ? "*" : " ", c.selector,
                           width, watts(c.power_limit), c.energy_saving * 100.0, std::abs(c.slowdown) * 100.0,
                           c.slowdown < 0 ? "faster" : "slower");
    }
    for (const auto& w : warnings) out += fmt::format("warning: {}\n", w);
    return out;
}

std::string PowerLimitReport::to_json() const {
    nlohmann::json doc;
    doc["world_size"] = world_size;
    doc["profile_steps"] = profile_steps ? nlohmann::json(*profile_steps) : nlohmann::json(nullptr);
    doc["measurements"] = nlohmann::json::array();
    for (const auto& r : rows) {
        nlohmann::json row{{"power_limit_w", watts(r.power_limit)},
                           {"time_s", r.time.count()},
                           {"energy_j", r.energy.count()},
                           {"average_power_w", r.average_power.count()}};
        if (r.time_per_step) row["time_per_step_s"] = r.time_per_step->count();
        if (r.energy_per_step) row["energy_per_step_j"] = r.energy_per_step->count();
        doc["measurements"].push_back(std::move(row));
    }
    doc["choices"] = nlohmann::json::array();
    for (const auto& c : choices) {
        doc["choices"].push_back({{"selector", c.selector},
                                  {"power_limit_w", watts(c.power_limit)},
                                  {"energy_saving", c.energy_saving},
                                  {"slowdown", c.slowdown},
                                  {"in_use", c.in_use}});
    }
    doc["warnings"] = warnings;
    return json_text(doc, 2);
}

}  // namespace zeus::optimizer
