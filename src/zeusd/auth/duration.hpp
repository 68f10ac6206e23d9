// `zeusd token issue --expires`: a duration in the syntax of Rust's
// `humantime::parse_duration` (what the original uses), or "never" / "0".
//
// Syntax: one or more <integer><unit> spans, spaces optional between spans
// ("1h30m", "1h 30m", "2 weeks"). Units, as humantime spells them:
//   ns nsec nanos | us usec | ms msec millis | s sec secs second seconds
//   m min mins minute minutes | h hr hrs hour hours | d day days
//   w week weeks | M month months (30.44 d) | y year years (365.25 d)
// Units are case-sensitive ("M" is months, "m" minutes). Whitespace is ASCII
// only (humantime also skips Unicode spaces; nobody types those).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

struct HumanDuration {
    std::uint64_t seconds = 0;
    std::uint32_t nanos = 0;  // < 1e9

    bool operator==(const HumanDuration&) const = default;
};

// humantime::parse_duration. The error message carries humantime's own
// wording ("expected number at 2", "unknown time unit \"x\", ...", "time
// unit needed, for example 5sec or 5ms", "number is too large", "value was
// empty").
[[nodiscard]] Result<HumanDuration> parse_human_duration(std::string_view text);

// --expires: the token's lifetime in whole seconds (sub-second parts are
// dropped, as the original's as_secs() does), or nullopt for "never" and "0",
// which issue a token without "exp". Errors name the value and list the syntax.
[[nodiscard]] Result<std::optional<std::uint64_t>> parse_expires(std::string_view text);

}  // namespace zeus::zeusd
