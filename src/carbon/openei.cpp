#include "zeus/carbon/openei.hpp"

#include <algorithm>
#include <array>
#include <mutex>

#include <fmt/format.h>

#include "carbon/provider_http.hpp"
#include "carbon/utc_time.hpp"
#include "zeus/platform/environment.hpp"

namespace zeus::carbon {

namespace {

using Schedule = std::array<std::array<std::size_t, 24>, 12>;

struct Tariff {
    std::vector<double> period_rates;  // first tier's rate + adj, per period
    Schedule weekday{};
    Schedule weekend{};
    std::string utility;
};

// The original's search: every object, at any depth, whose "label" equals `label`.
const nlohmann::json* find_label(const nlohmann::json& data, const std::string& label) {
    if (data.is_object()) {
        if (const auto it = data.find("label"); it != data.end() && it->is_string() && *it == label) return &data;
        for (const auto& [key, value] : data.items()) {
            if (const auto* found = find_label(value, label)) return found;
        }
    } else if (data.is_array()) {
        for (const auto& item : data) {
            if (const auto* found = find_label(item, label)) return found;
        }
    }
    return nullptr;
}

std::string rate_what(const OpenEiOptions& options) { return fmt::format("OpenEI utility rate '{}'", options.label); }

// The rate object labelled options.label in OpenEI's answer, as sent.
Result<nlohmann::json> fetch_rate(HttpClient& client, const OpenEiOptions& options) {
    const std::string what = rate_what(options);
    auto json = get_json(client,
                         fmt::format("/utility_rates?version=latest&format=json&api_key={}&lat={}&lon={}&radius={}"
                                     "&detail=full&sector={}",
                                     url_encode(*options.api_key), options.location.latitude,
                                     options.location.longitude, options.radius, url_encode(options.sector)),
                         what, fmt::format("check the API key in {} and the location", kOpenEiKeyVariable));
    if (!json) return json.error();
    const nlohmann::json* rate = find_label(*json, options.label);
    if (rate == nullptr) {
        return Error{
            ErrorCode::NotFound,
            fmt::format("{}: no rate with that label among OpenEI's {} rates within {} miles of lat {}, "
                        "lon {}",
                        what, options.sector, options.radius, options.location.latitude, options.location.longitude),
            "look the label up at apps.openei.org/USURDB and check the sector and location", 0};
    }
    return *rate;
}

class OpenEiPrices final : public ElectricityPriceProvider {
  public:
    explicit OpenEiPrices(OpenEiOptions options)
        : options_(std::move(options)), client_(api_client(options_.base_url, "OpenEI", {})) {}

    [[nodiscard]] std::string provider() const override { return "OpenEI"; }
    [[nodiscard]] std::string zone() const override {
        std::lock_guard lock(mutex_);
        return fmt::format("rate '{}' ({}{}{}) at lat {}, lon {} ({})", options_.label, options_.sector,
                           tariff_ && !tariff_->utility.empty() ? ", " : "", tariff_ ? tariff_->utility : "",
                           options_.location.latitude, options_.location.longitude, options_.location.source);
    }
    [[nodiscard]] std::string currency() const override { return "USD"; }

    [[nodiscard]] Result<std::vector<HourlyRate>> prices(const std::vector<UtcTime>& hours) override {
        std::lock_guard lock(mutex_);
        if (!tariff_) {
            auto fetched = fetch();
            if (!fetched) return fetched.error();
            tariff_ = std::move(*fetched);
        }
        std::vector<HourlyRate> rates;
        for (const UtcTime hour : hours) {
            const TariffHour t = tariff_hour(hour, options_.utc_offset_hours);
            const Schedule& schedule = t.weekend() ? tariff_->weekend : tariff_->weekday;
            rates.push_back(HourlyRate{hour, tariff_->period_rates[schedule[t.month - 1][t.hour]], hour, false});
        }
        return rates;
    }

  private:
    Result<Tariff> fetch() {
        auto rate = fetch_rate(*client_, options_);
        if (!rate) return rate.error();
        return read_tariff(*rate, rate_what(options_));
    }

    static Result<Tariff> read_tariff(const nlohmann::json& rate, const std::string& what) {
        auto malformed = [&](const std::string& problem) {
            return Error{ErrorCode::InvalidState, fmt::format("{}: {}", what, problem),
                         "the rate lacks what a time-of-use lookup needs; pick another label or use --price-file", 0};
        };
        Tariff tariff;
        if (const auto u = rate.find("utility"); u != rate.end() && u->is_string()) tariff.utility = *u;
        const auto structure = rate.find("energyratestructure");
        if (structure == rate.end() || !structure->is_array() || structure->empty()) {
            return malformed("no \"energyratestructure\" list");
        }
        for (std::size_t p = 0; p < structure->size(); ++p) {
            const auto& tiers = (*structure)[p];
            if (!tiers.is_array() || tiers.empty() || !tiers[0].is_object() || !tiers[0].contains("rate") ||
                !tiers[0]["rate"].is_number()) {
                return malformed(fmt::format("period {} of \"energyratestructure\" has no first tier with a rate", p));
            }
            double per_kwh = tiers[0]["rate"].get<double>();
            if (tiers[0].contains("adj") && tiers[0]["adj"].is_number()) per_kwh += tiers[0]["adj"].get<double>();
            tariff.period_rates.push_back(per_kwh);
        }
        for (const auto& [key, schedule] :
             {std::pair{"energyweekdayschedule", &tariff.weekday}, std::pair{"energyweekendschedule", &tariff.weekend}}) {
            const auto it = rate.find(key);
            if (it == rate.end() || !it->is_array() || it->size() != 12) {
                return malformed(fmt::format("\"{}\" is not 12 months of 24 hours", key));
            }
            for (std::size_t m = 0; m < 12; ++m) {
                const auto& month = (*it)[m];
                if (!month.is_array() || month.size() != 24) {
                    return malformed(fmt::format("\"{}\" month {} is not 24 hours", key, m + 1));
                }
                for (std::size_t h = 0; h < 24; ++h) {
                    if (!month[h].is_number_unsigned() || month[h].get<std::size_t>() >= tariff.period_rates.size()) {
                        return malformed(fmt::format("\"{}\" month {} hour {} names no period of the rate structure",
                                                     key, m + 1, h));
                    }
                    (*schedule)[m][h] = month[h].get<std::size_t>();
                }
            }
        }
        return tariff;
    }

    OpenEiOptions options_;
    std::unique_ptr<HttpClient> client_;
    mutable std::mutex mutex_;
    std::optional<Tariff> tariff_;
};

// The options' problems (InvalidConfig), with the API key read from the environment when not given.
std::optional<Error> complete_options(OpenEiOptions& options) {
    static constexpr std::array kSectors{"Residential", "Commercial", "Industrial", "Lighting"};
    if (std::find(kSectors.begin(), kSectors.end(), options.sector) == kSectors.end()) {
        return Error{ErrorCode::InvalidConfig, fmt::format("OpenEI sector '{}' is not one OpenEI has", options.sector),
                     "use Residential, Commercial, Industrial or Lighting", 0};
    }
    if (options.label.empty()) {
        return Error{ErrorCode::InvalidConfig, "no OpenEI rate label",
                     "give the label of the rate (apps.openei.org/USURDB)", 0};
    }
    if (options.radius < 0 || options.utc_offset_hours < -12 || options.utc_offset_hours > 14) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("OpenEI radius {} / UTC offset {} h out of range", options.radius,
                                 options.utc_offset_hours),
                     "radius of at least 0 miles, offset from -12 to 14 hours", 0};
    }
    if (!options.api_key) options.api_key = get_env(kOpenEiKeyVariable);
    if (!options.api_key || options.api_key->empty()) {
        return Error{ErrorCode::InvalidConfig, fmt::format("no OpenEI API key: {} is not set", kOpenEiKeyVariable),
                     fmt::format("set {} to your key (openei.org/services/api/signup), or use --price / --price-file",
                                 kOpenEiKeyVariable),
                     0};
    }
    return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<ElectricityPriceProvider>> openei_prices(OpenEiOptions options) {
    if (auto problem = complete_options(options)) return *problem;
    return std::unique_ptr<ElectricityPriceProvider>(std::make_unique<OpenEiPrices>(std::move(options)));
}

Result<std::string> openei_rate_json(OpenEiOptions options) {
    if (auto problem = complete_options(options)) return *problem;
    const auto client = api_client(options.base_url, "OpenEI", {});
    auto rate = fetch_rate(*client, options);
    if (!rate) return rate.error();
    return rate->dump();
}

}  // namespace zeus::carbon
