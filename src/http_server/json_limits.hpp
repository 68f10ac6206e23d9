// JSON from a request, read with limits that hold for any body: a nesting
// depth (a 16 MiB body of '[' cost 6 s of CPU and 377 MB as a DOM) and,
// where last-one-wins would be a hole (a token's claims), refused duplicate
// keys. Shared by every server's JSON readers and zeusd's token check.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

namespace zeus::http_server {

// Deeper than any document of the project's APIs (theirs nest 3 levels).
inline constexpr std::size_t kMaxJsonDepth = 64;

// A document that breaks a limit; what() names the limit and the fix.
class JsonLimitError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct JsonChecks {
    std::size_t max_depth = kMaxJsonDepth;
    bool refuse_duplicate_keys = false;
};

// Throws JsonLimitError before building anything when the text nests deeper
// than checks.max_depth, and for a key repeated within one object when
// checks.refuse_duplicate_keys; nlohmann::json::parse_error for text that is
// not JSON (as nlohmann::json::parse).
[[nodiscard]] nlohmann::json parse_json_checked(std::string_view text, JsonChecks checks = {});

}  // namespace zeus::http_server
