#include "zeus/carbon/price_file.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "carbon/csv_rows.hpp"
#include "carbon/utc_time.hpp"

namespace zeus::carbon {

namespace {

constexpr const char* kShape =
    "a CSV with the header days,start_hour,end_hour,price_per_kwh[,months] and rows such as weekday,7,19,0.21 "
    "(days: all, weekday, weekend, mon..sun; hours 0-24, end exclusive; months such as 6-9)";

struct TouRow {
    std::array<bool, 7> days{};    // by weekday, 0 = Sunday
    std::array<bool, 12> months{};
    unsigned start = 0;
    unsigned end = 24;
    double per_kwh = 0;
};

std::optional<std::array<bool, 7>> parse_days(const std::string& text) {
    static constexpr std::array kNames{"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
    std::array<bool, 7> days{};
    if (text == "all") {
        days.fill(true);
    } else if (text == "weekday") {
        for (unsigned d = 1; d <= 5; ++d) days[d] = true;
    } else if (text == "weekend") {
        days[0] = days[6] = true;
    } else {
        for (std::size_t d = 0; d < kNames.size(); ++d) days[d] = text == kNames[d];
        if (std::find(days.begin(), days.end(), true) == days.end()) return std::nullopt;
    }
    return days;
}

std::optional<std::array<bool, 12>> parse_months(const std::string& text) {
    std::array<bool, 12> months{};
    if (text.empty() || text == "all") {
        months.fill(true);
        return months;
    }
    const auto dash = text.find('-');
    const auto first = parse_number(text.substr(0, dash));
    const auto last = dash == std::string::npos ? first : parse_number(text.substr(dash + 1));
    if (!first || !last || *first < 1 || *last > 12 || *first > *last || *first != static_cast<int>(*first) ||
        *last != static_cast<int>(*last)) {
        return std::nullopt;
    }
    for (int m = static_cast<int>(*first); m <= static_cast<int>(*last); ++m) months[static_cast<std::size_t>(m - 1)] = true;
    return months;
}

class PriceFile final : public ElectricityPriceProvider {
  public:
    PriceFile(std::string path, std::string currency, int offset, std::vector<TouRow> rows)
        : path_(std::move(path)), currency_(std::move(currency)), offset_(offset), rows_(std::move(rows)) {}
    [[nodiscard]] std::string provider() const override { return "file " + path_; }
    [[nodiscard]] std::string zone() const override {
        return offset_ == 0 ? "time-of-use table, UTC hours" : fmt::format("time-of-use table, UTC{:+} hours", offset_);
    }
    [[nodiscard]] std::string currency() const override { return currency_; }
    [[nodiscard]] Result<std::vector<HourlyRate>> prices(const std::vector<UtcTime>& hours) override {
        std::vector<HourlyRate> rates;
        for (const UtcTime hour : hours) {
            const TariffHour t = tariff_hour(hour, offset_);
            for (const auto& row : rows_) {
                if (row.days[t.weekday] && row.months[t.month - 1] && t.hour >= row.start && t.hour < row.end) {
                    rates.push_back(HourlyRate{hour, row.per_kwh, hour, false});
                    break;
                }
            }
        }
        return rates;
    }

  private:
    std::string path_;
    std::string currency_;
    int offset_;
    std::vector<TouRow> rows_;
};

}  // namespace

Result<std::unique_ptr<ElectricityPriceProvider>> prices_from_file(const std::string& path, std::string currency,
                                                                  int utc_offset_hours) {
    auto text = read_text_file(path, "price file", "--price-file");
    if (!text) return text.error();
    auto table = read_csv(path, *text);
    if (!table) return table.error();
    for (const char* required : {"days", "start_hour", "end_hour", "price_per_kwh"}) {
        if (!table->columns.contains(required)) {
            return Error{ErrorCode::InvalidConfig, fmt::format("{}: the header has no {} column", path, required),
                         fmt::format("the file must be {}", kShape), 0};
        }
    }
    std::vector<TouRow> rows;
    for (const auto& row : table->rows) {
        auto bad = [&](const std::string& problem) {
            return Error{ErrorCode::InvalidConfig, fmt::format("{} line {}: {}", path, row.line, problem),
                         fmt::format("fix that line; the file must be {}", kShape), 0};
        };
        TouRow tou;
        const std::string days = *table->cell(row, {"days"});
        const auto parsed_days = parse_days(days);
        if (!parsed_days) return bad(fmt::format("days '{}' is not all, weekday, weekend or mon..sun", days));
        tou.days = *parsed_days;
        const std::string months = table->cell(row, {"months"}).value_or("");
        const auto parsed_months = parse_months(months);
        if (!parsed_months) return bad(fmt::format("months '{}' is not a month 1-12 or a range such as 6-9", months));
        tou.months = *parsed_months;
        const std::string start = *table->cell(row, {"start_hour"});
        const std::string end = *table->cell(row, {"end_hour"});
        const auto s = parse_number(start);
        const auto e = parse_number(end);
        if (!s || !e || *s != static_cast<int>(*s) || *e != static_cast<int>(*e) || *s < 0 || *e > 24 || *s >= *e) {
            return bad(fmt::format("hours {} to {} are not whole hours with 0 <= start < end <= 24", start, end));
        }
        tou.start = static_cast<unsigned>(*s);
        tou.end = static_cast<unsigned>(*e);
        const std::string price = *table->cell(row, {"price_per_kwh"});
        const auto p = parse_number(price);
        if (!p || *p < 0) return bad(fmt::format("price '{}' is not a finite number of at least 0 (per kWh)", price));
        tou.per_kwh = *p;
        rows.push_back(tou);
    }
    if (rows.empty()) {
        return Error{ErrorCode::InvalidConfig, fmt::format("{} has a header but no rows", path),
                     fmt::format("the file must be {}", kShape), 0};
    }
    if (utc_offset_hours < -12 || utc_offset_hours > 14) {
        return Error{ErrorCode::InvalidConfig, fmt::format("UTC offset {} h is out of range", utc_offset_hours),
                     "give an offset from -12 to 14 hours", 0};
    }
    return std::unique_ptr<ElectricityPriceProvider>(
        std::make_unique<PriceFile>(path, std::move(currency), utc_offset_hours, std::move(rows)));
}

}  // namespace zeus::carbon
