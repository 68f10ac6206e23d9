#include "carbon/utc_time.hpp"

#include <fmt/format.h>

#include <charconv>

namespace zeus::carbon {

namespace {

// Reads exactly `digits` decimal digits at `pos`.
std::optional<int> digits_at(std::string_view s, std::size_t pos, std::size_t digits) {
    if (pos + digits > s.size()) return std::nullopt;
    int value = 0;
    const auto* first = s.data() + pos;
    const auto [end, ec] = std::from_chars(first, first + digits, value);
    if (ec != std::errc{} || end != first + digits) return std::nullopt;
    return value;
}

}  // namespace

std::optional<UtcTime> parse_utc(std::string_view s) {
    const auto year = digits_at(s, 0, 4);
    const auto month = digits_at(s, 5, 2);
    const auto day = digits_at(s, 8, 2);
    const auto hour = digits_at(s, 11, 2);
    const auto minute = digits_at(s, 14, 2);
    if (!year || !month || !day || !hour || !minute || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
        s[13] != ':') {
        return std::nullopt;
    }
    std::size_t pos = 16;
    int second = 0;
    if (pos < s.size() && s[pos] == ':') {
        const auto sec = digits_at(s, pos + 1, 2);
        if (!sec) return std::nullopt;
        second = *sec;
        pos += 3;
        if (pos < s.size() && s[pos] == '.') {  // fractions of a second are dropped
            ++pos;
            while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
        }
    }
    std::chrono::minutes offset{0};
    if (pos < s.size()) {
        if (s[pos] == 'Z' && pos + 1 == s.size()) {
            pos += 1;
        } else if ((s[pos] == '+' || s[pos] == '-') && pos + 6 == s.size() && s[pos + 3] == ':') {
            const auto oh = digits_at(s, pos + 1, 2);
            const auto om = digits_at(s, pos + 4, 2);
            if (!oh || !om) return std::nullopt;
            offset = std::chrono::hours(*oh) + std::chrono::minutes(*om);
            if (s[pos] == '-') offset = -offset;
        } else {
            return std::nullopt;
        }
    }
    const std::chrono::year_month_day ymd{std::chrono::year(*year), std::chrono::month(static_cast<unsigned>(*month)),
                                          std::chrono::day(static_cast<unsigned>(*day))};
    if (!ymd.ok() || *hour > 23 || *minute > 59 || second > 60) return std::nullopt;
    return std::chrono::sys_days(ymd) + std::chrono::hours(*hour) + std::chrono::minutes(*minute) +
           std::chrono::seconds(second) - offset;
}

}  // namespace zeus::carbon

namespace zeus::carbon {

TariffHour tariff_hour(UtcTime utc_hour, int utc_offset_hours) {
    const auto local = utc_hour + std::chrono::hours(utc_offset_hours);
    const auto day = std::chrono::floor<std::chrono::days>(local);
    const std::chrono::year_month_day ymd{day};
    TariffHour t;
    t.month = static_cast<unsigned>(ymd.month());
    t.weekday = std::chrono::weekday(day).c_encoding();
    t.hour = static_cast<unsigned>(std::chrono::floor<std::chrono::hours>(local - day).count());
    return t;
}

}  // namespace zeus::carbon
