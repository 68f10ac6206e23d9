#include "zeus/carbon/charge_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "zeus/platform/utf8.hpp"

namespace zeus::carbon {

namespace {

// The unit of a rate: "g/kWh", "USD/kWh", or "per kWh" for a price given
// without a currency.
std::string rate_unit(const ChargeLine& line) {
    if (line.kind == "carbon") return "g/kWh";
    if (line.provenance.unit.empty()) return "per kWh";
    return line.provenance.unit + "/kWh";
}

}  // namespace

std::string fixed_amount(double value, int significant) {
    // Fixed notation (never "2.00777e-06"), with `significant` digits for
    // small amounts and at least two decimals (cents) for large ones.
    int decimals = 2;
    if (value != 0.0 && std::isfinite(value)) {
        const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
        decimals = std::clamp(significant - 1 - magnitude, 2, 12);
    }
    return fmt::format("{:.{}f}", value, decimals);
}

namespace {

std::string short_hour(UtcTime hour) {
    const std::string full = format_utc(hour);  // 2026-11-25T10:00:00Z
    return full.substr(11, 5) + "Z";
}

}  // namespace

std::string charge_json(const ChargeLine& line) {
    const auto& p = line.provenance;
    nlohmann::ordered_json j;
    j["total"] = line.total ? nlohmann::ordered_json(*line.total) : nlohmann::ordered_json(nullptr);
    j["unit"] = p.unit;
    j["provider"] = p.provider;
    j["zone"] = p.zone;
    j["available"] = p.available();
    j["unavailable_reason"] = p.available() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.unavailable_reason);
    j["fallback_used"] = p.fallback_used;
    j["estimated"] = p.estimated;
    j["warnings"] = p.warnings;
    auto hours = nlohmann::ordered_json::array();
    for (const auto& h : p.hours) {
        nlohmann::ordered_json o;
        o["hour"] = format_utc(h.hour);
        o["seconds"] = h.time.count();
        o["energy_j"] = h.energy.count();
        if (h.rate) {
            o["per_kwh"] = h.rate->per_kwh;
            o["data_time"] = format_utc(h.rate->data_time);
            o["estimated"] = h.rate->estimated;
            o["amount"] = h.amount;
        } else {
            o["per_kwh"] = nullptr;
            o["data_time"] = nullptr;
            o["estimated"] = nullptr;
            o["amount"] = nullptr;
        }
        o["fallback"] = h.fallback;
        o["fallback_reason"] = h.fallback ? nlohmann::ordered_json(h.fallback_reason) : nlohmann::ordered_json(nullptr);
        hours.push_back(std::move(o));
    }
    j["hours"] = std::move(hours);
    return json_text(j);
}

std::string charge_human(const ChargeLine& line) {
    const auto& p = line.provenance;
    if (!line.total) return fmt::format("{}: unavailable ({})", line.kind, p.unavailable_reason);
    std::string rates;
    for (const auto& h : p.hours) {
        if (!h.rate) continue;
        rates += fmt::format("{}{} {:g} {}{}{}", rates.empty() ? "" : ", ", short_hour(h.hour), h.rate->per_kwh,
                             rate_unit(line), h.rate->estimated ? " estimated" : "", h.fallback ? " FALLBACK" : "");
    }
    std::string amount =
        line.kind == "carbon" ? fixed_amount(*line.total, 4) + " gCO2eq" : fixed_amount(*line.total, 3);
    if (line.kind != "carbon" && !p.unit.empty()) amount += " " + p.unit;
    return fmt::format("{}: {} ({}, zone {}; {})", line.kind, amount, p.provider, p.zone, rates);
}

std::string charge_csv_cell(const ChargeLine& line) {
    return line.total ? fmt::format("{:.9g}", *line.total) : std::string();
}

}  // namespace zeus::carbon
