// How `zeus run`/`zeus energy` (and anything else) print a window's carbon
// emission or cost beside its joules: one JSON object with the full
// provenance, one human line, and a CSV cell that is empty (never 0) when
// the amount is unavailable.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "zeus/carbon/window_charge.hpp"

namespace zeus::carbon {

struct ChargeLine {
    std::string kind;                  // "carbon" or "cost"
    std::optional<double> total;       // nullopt: unavailable
    ChargeProvenance provenance;
    // Each device's share by its report label ("GPU 0", "CPU 0", "DRAM 0"); empty when unavailable.
    std::map<std::string, double> by_device;

    [[nodiscard]] std::optional<double> of(const std::string& device) const {
        const auto it = by_device.find(device);
        return it == by_device.end() ? std::nullopt : std::optional<double>(it->second);
    }
};

// {"total": 1.23 | null, "unit", "provider", "zone", "available",
//  "unavailable_reason", "fallback_used", "estimated", "warnings": [...],
//  "hours": [{"hour", "seconds", "energy_j", "per_kwh", "data_time",
//  "estimated", "fallback", "fallback_reason", "amount"}]}
[[nodiscard]] std::string charge_json(const ChargeLine& line);

// `value` in fixed notation with `significant` digits when it is small and at
// least two decimals: 2.00777e-06 -> "0.00000201", 1234.5 -> "1234.50" (3).
[[nodiscard]] std::string fixed_amount(double value, int significant);

// "carbon: 12.3 gCO2eq (ElectricityMaps, zone DE; 10:00Z 419 g/kWh, 11:00Z 416 g/kWh estimated)"
// or "carbon: unavailable (why)". Warnings are not included (print them where the others go).
[[nodiscard]] std::string charge_human(const ChargeLine& line);

// The amount for a CSV cell: "" when unavailable.
[[nodiscard]] std::string charge_csv_cell(const ChargeLine& line);

}  // namespace zeus::carbon
