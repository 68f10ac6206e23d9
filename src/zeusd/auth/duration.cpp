#include "zeusd/auth/duration.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

constexpr std::uint64_t kNanosPerSecond = 1'000'000'000;

// Unit name -> {seconds per unit, nanoseconds per unit}; exactly one is non-zero.
struct Unit {
    std::string_view name;
    std::uint64_t seconds;
    std::uint64_t nanos;
};

constexpr std::array kUnits = {
    Unit{"nanos", 0, 1}, Unit{"nsec", 0, 1}, Unit{"ns", 0, 1},
    Unit{"usec", 0, 1000}, Unit{"us", 0, 1000},
    Unit{"millis", 0, 1'000'000}, Unit{"msec", 0, 1'000'000}, Unit{"ms", 0, 1'000'000},
    Unit{"seconds", 1, 0}, Unit{"second", 1, 0}, Unit{"secs", 1, 0}, Unit{"sec", 1, 0}, Unit{"s", 1, 0},
    Unit{"minutes", 60, 0}, Unit{"minute", 60, 0}, Unit{"min", 60, 0}, Unit{"mins", 60, 0}, Unit{"m", 60, 0},
    Unit{"hours", 3600, 0}, Unit{"hour", 3600, 0}, Unit{"hr", 3600, 0}, Unit{"hrs", 3600, 0}, Unit{"h", 3600, 0},
    Unit{"days", 86400, 0}, Unit{"day", 86400, 0}, Unit{"d", 86400, 0},
    Unit{"weeks", 604800, 0}, Unit{"week", 604800, 0}, Unit{"w", 604800, 0},
    Unit{"months", 2'630'016, 0}, Unit{"month", 2'630'016, 0}, Unit{"M", 2'630'016, 0},  // 30.44 days
    Unit{"years", 31'557'600, 0}, Unit{"year", 31'557'600, 0}, Unit{"y", 31'557'600, 0},  // 365.25 days
};

constexpr std::string_view kSyntaxHint =
    "write a duration such as 7d, 12h, 30m, 90s, '1h 30m' or 2weeks (units ns, us, ms, s, m, h, d, w, "
    "M = 30.44 days, y = 365.25 days, and their long forms)";

Error syntax_error(std::string message) {
    return Error{ErrorCode::InvalidArgument, std::move(message), std::string(kSyntaxHint)};
}

Error overflow() { return syntax_error("number is too large"); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool checked_add(std::uint64_t a, std::uint64_t b, std::uint64_t& out) { return !__builtin_add_overflow(a, b, &out); }

// A port of humantime's Parser: the same states, so the same inputs are
// accepted and the same offsets reported.
class Parser {
  public:
    explicit Parser(std::string_view text) : text_(text) {}

    Result<HumanDuration> parse() {
        auto first = first_digit();
        if (!first) return first.error();
        if (!first.value()) return syntax_error("value was empty");
        std::uint64_t n = *first.value();
        while (true) {
            // The rest of the number; spaces inside it are skipped ("1 0s" is 10s).
            std::size_t unit_start = pos_;
            while (pos_ < text_.size()) {
                const char c = text_[pos_];
                if (is_digit(c)) {
                    if (!checked_mul(n, 10, n) || !checked_add(n, static_cast<std::uint64_t>(c - '0'), n)) {
                        return overflow();
                    }
                } else if (is_letter(c)) {
                    break;
                } else if (!is_space(c)) {
                    return syntax_error(fmt::format("invalid character at {}", pos_));
                }
                ++pos_;
                unit_start = pos_;
            }
            // The unit: letters up to a space, a digit (the next span) or the end.
            bool next_span = false;
            std::size_t unit_end = pos_;
            while (pos_ < text_.size()) {
                const char c = text_[pos_];
                if (is_digit(c)) {
                    next_span = true;
                    break;
                }
                if (is_space(c)) {
                    ++pos_;
                    break;
                }
                if (!is_letter(c)) return syntax_error(fmt::format("invalid character at {}", pos_));
                ++pos_;
                unit_end = pos_;
            }
            if (auto added = add_span(n, text_.substr(unit_start, unit_end - unit_start)); !added) {
                return added.error();
            }
            if (next_span) {
                n = static_cast<std::uint64_t>(text_[pos_++] - '0');
                continue;
            }
            auto next = first_digit();
            if (!next) return next.error();
            if (!next.value()) return finish();
            n = *next.value();
        }
    }

  private:
    // Skips spaces; the first digit of a span, nullopt at the end of the text.
    Result<std::optional<std::uint64_t>> first_digit() {
        const std::size_t start = pos_;
        while (pos_ < text_.size()) {
            const char c = text_[pos_++];
            if (is_digit(c)) return std::optional<std::uint64_t>(static_cast<std::uint64_t>(c - '0'));
            if (!is_space(c)) return syntax_error(fmt::format("expected number at {}", start));
        }
        return std::optional<std::uint64_t>();
    }

    Status add_span(std::uint64_t n, std::string_view unit_name) {
        if (unit_name.empty()) {
            return syntax_error(fmt::format("time unit needed, for example {0}sec or {0}ms", n));
        }
        for (const auto& unit : kUnits) {
            if (unit.name != unit_name) continue;
            std::uint64_t seconds = 0;
            std::uint64_t nanos = 0;
            if (!checked_mul(n, unit.seconds, seconds) || !checked_mul(n, unit.nanos, nanos)) return overflow();
            if (!checked_add(nanos_, nanos, nanos_)) return overflow();
            if (!checked_add(seconds, nanos_ / kNanosPerSecond, seconds)) return overflow();
            nanos_ %= kNanosPerSecond;
            if (!checked_add(seconds_, seconds, seconds_)) return overflow();
            return {};
        }
        return syntax_error(fmt::format(
            "unknown time unit \"{}\", supported units: ns, us, ms, sec, min, hours, days, weeks, months, "
            "years (and few variations)", unit_name));
    }

    Result<HumanDuration> finish() const {
        return HumanDuration{seconds_, static_cast<std::uint32_t>(nanos_)};
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    std::uint64_t seconds_ = 0;
    std::uint64_t nanos_ = 0;
};

}  // namespace

Result<HumanDuration> parse_human_duration(std::string_view text) { return Parser(text).parse(); }

Result<std::optional<std::uint64_t>> parse_expires(std::string_view text) {
    if (text == "never" || text == "0") return std::optional<std::uint64_t>();
    auto duration = parse_human_duration(text);
    if (!duration) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("invalid --expires value '{}': {}", text, duration.error().message),
                     duration.error().hint + ", or 'never' (or 0) for a token that does not expire"};
    }
    return std::optional<std::uint64_t>(duration.value().seconds);
}

}  // namespace zeus::zeusd
