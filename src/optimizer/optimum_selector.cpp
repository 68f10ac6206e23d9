#include "zeus/optimizer/optimum_selector.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace zeus::optimizer {
namespace {

constexpr const char* kSelectorForms =
    "use one of: time, energy, zeus-cost[:eta=E][,world_size=N] (E in [0, 1], default 0.5), max-slowdown:F (F >= 1), "
    "carbon[:eta=E][,threshold=T][,reference=R] (with a carbon intensity: --carbon-intensity/-file/-zone)";

Error no_measurements() {
    return Error{ErrorCode::NoData, "there are no power-limit measurements to choose from",
                 "profile at least one power limit (or load a profile with measurements) first", 0};
}

double watts(Milliwatts limit) { return quantity_cast<Watts>(limit).count(); }

// The first measurement with the smallest key wins, as Python's min() does.
template <class Key>
Milliwatts first_minimum(std::span<const PowerLimitMeasurement> measurements, Key key) {
    const PowerLimitMeasurement* best = &measurements.front();
    double best_key = key(*best);
    for (const auto& m : measurements.subspan(1)) {
        const double k = key(m);
        if (k < best_key) {
            best = &m;
            best_key = k;
        }
    }
    return best->power_limit;
}

class TimeSelector final : public OptimumSelector {
  public:
    [[nodiscard]] std::string name() const override { return "time"; }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                            const SelectionContext&) const override {
        if (measurements.empty()) return no_measurements();
        return first_minimum(measurements, [](const PowerLimitMeasurement& m) { return m.time.count(); });
    }
};

class EnergySelector final : public OptimumSelector {
  public:
    [[nodiscard]] std::string name() const override { return "energy"; }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                            const SelectionContext&) const override {
        if (measurements.empty()) return no_measurements();
        return first_minimum(measurements, [](const PowerLimitMeasurement& m) { return m.energy.count(); });
    }
};

class ZeusCostSelector final : public OptimumSelector {
  public:
    ZeusCostSelector(double eta, std::optional<int> world_size) : eta_(eta), world_size_(world_size) {}

    [[nodiscard]] std::string name() const override {
        return world_size_ ? fmt::format("zeus-cost:eta={},world_size={}", eta_, *world_size_)
                           : fmt::format("zeus-cost:eta={}", eta_);
    }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                            const SelectionContext& context) const override {
        if (measurements.empty()) return no_measurements();
        const int world_size = world_size_.value_or(context.world_size);
        if (world_size < 1) {
            return Error{ErrorCode::InvalidArgument, fmt::format("ZeusCost world size {} is below 1", world_size),
                         "count every GPU whose energy is summed (at least 1)", 0};
        }
        double max_limit_w = 0;
        for (const auto& m : measurements) max_limit_w = std::max(max_limit_w, watts(m.power_limit));
        const double max_power = max_limit_w * world_size;
        // Evaluated in the original's order (zeus.utils.metric.zeus_cost) so
        // near-ties break the same way.
        return first_minimum(measurements, [&](const PowerLimitMeasurement& m) {
            return eta_ * m.energy.count() + (1 - eta_) * max_power * m.time.count();
        });
    }

  private:
    double eta_;
    std::optional<int> world_size_;
};

class MaxSlowdownSelector final : public OptimumSelector {
  public:
    explicit MaxSlowdownSelector(double factor) : factor_(factor) {}

    [[nodiscard]] std::string name() const override { return fmt::format("max-slowdown:{}", factor_); }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                            const SelectionContext&) const override {
        if (measurements.empty()) return no_measurements();
        const auto top = std::max_element(measurements.begin(), measurements.end(), [](const auto& a, const auto& b) {
            return a.power_limit < b.power_limit;
        });
        // The reference is the time at the highest limit, not the shortest
        // time: a slightly faster lower limit does not tighten the budget.
        const double budget = factor_ * top->time.count();
        std::optional<Milliwatts> lowest;
        for (const auto& m : measurements) {
            if (m.time.count() <= budget && (!lowest || m.power_limit < *lowest)) lowest = m.power_limit;
        }
        return *lowest;  // the highest limit itself always fits (factor >= 1)
    }

  private:
    double factor_;
};

std::optional<double> parse_number(std::string_view text) {
    double value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr != end || !std::isfinite(value)) return std::nullopt;
    return value;
}

}  // namespace

Error bad_spec(std::string_view spec, std::string_view why) {
    return Error{ErrorCode::InvalidArgument, fmt::format("optimum selector '{}': {}", spec, why), kSelectorForms, 0};
}

namespace {

}  // namespace

Result<std::vector<std::pair<std::string, double>>> parse_selector_settings(std::string_view spec,
                                                                           std::string_view arguments) {
    std::vector<std::pair<std::string, double>> settings;
    while (!arguments.empty()) {
        const auto comma = arguments.find(',');
        const std::string_view item = arguments.substr(0, comma);
        arguments = comma == std::string_view::npos ? std::string_view{} : arguments.substr(comma + 1);
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) return bad_spec(spec, fmt::format("'{}' is not key=value", item));
        const auto value = parse_number(item.substr(eq + 1));
        if (!value) return bad_spec(spec, fmt::format("'{}' is not a number", item.substr(eq + 1)));
        settings.emplace_back(std::string(item.substr(0, eq)), *value);
    }
    return settings;
}

Result<int> parse_world_size(std::string_view spec, double value) {
    if (value != std::floor(value) || value < 1 || value > 1e6) {
        return bad_spec(spec, "world_size must be a whole number of GPUs, at least 1");
    }
    return static_cast<int>(value);
}

namespace {

Result<SelectorPtr> parse_zeus_cost(std::string_view spec, std::string_view arguments) {
    auto settings = parse_selector_settings(spec, arguments);
    if (!settings) return settings.error();
    double eta = 0.5;
    std::optional<int> world_size;
    for (const auto& [key, value] : *settings) {
        if (key == "eta" || key == "eta_knob") {
            eta = value;
        } else if (key == "world_size") {
            auto n = parse_world_size(spec, value);
            if (!n) return n.error();
            world_size = *n;
        } else {
            return bad_spec(spec, fmt::format("unknown setting '{}'", key));
        }
    }
    return zeus_cost(eta, world_size);
}

}  // namespace

SelectorPtr time_selector() { return std::make_shared<TimeSelector>(); }
SelectorPtr energy_selector() { return std::make_shared<EnergySelector>(); }

Result<SelectorPtr> zeus_cost(double eta_knob, std::optional<int> world_size) {
    if (!(eta_knob >= 0.0 && eta_knob <= 1.0)) {
        return Error{ErrorCode::InvalidArgument, fmt::format("ZeusCost eta_knob {} is outside [0, 1]", eta_knob),
                     "0 optimizes time only, 1 energy only; 0.5 weighs them equally", 0};
    }
    if (world_size && *world_size < 1) {
        return Error{ErrorCode::InvalidArgument, fmt::format("ZeusCost world_size {} is below 1", *world_size),
                     "pass the number of GPUs the energy is summed over, or leave it unset to count them", 0};
    }
    return SelectorPtr(std::make_shared<ZeusCostSelector>(eta_knob, world_size));
}

Result<SelectorPtr> max_slowdown_constraint(double factor) {
    if (!(factor >= 1.0) || !std::isfinite(factor)) {
        return Error{ErrorCode::InvalidArgument, fmt::format("MaxSlowdownConstraint factor {} is below 1", factor),
                     "give the largest acceptable time relative to the maximum power limit, e.g. 1.1 for 10% slower",
                     0};
    }
    return SelectorPtr(std::make_shared<MaxSlowdownSelector>(factor));
}

Result<SelectorPtr> parse_selector(std::string_view spec) {
    const auto colon = spec.find(':');
    const std::string_view kind = spec.substr(0, colon);
    const std::string_view arguments = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
    if (kind == "time" || kind == "energy") {
        if (colon != std::string_view::npos) return bad_spec(spec, fmt::format("'{}' takes no settings", kind));
        return kind == "time" ? time_selector() : energy_selector();
    }
    if (kind == "zeus-cost") return parse_zeus_cost(spec, arguments);
    if (kind == "max-slowdown") {
        const auto factor = parse_number(arguments);
        if (!factor) return bad_spec(spec, "give the slowdown factor, e.g. max-slowdown:1.1");
        return max_slowdown_constraint(*factor);
    }
    return bad_spec(spec, "unknown selector");
}

}  // namespace zeus::optimizer
