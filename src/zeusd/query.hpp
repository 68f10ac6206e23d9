// Query strings as the original daemon reads them (serde_urlencoded with
// deny_unknown_fields): every parameter is named up front, unknown or
// repeated ones are rejected, booleans are exactly `true` or `false`, numbers
// are unsigned decimals that fit their type. Failures become the original's
// plain-text 400 bodies ("Query deserialize error: ...").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace zeus::zeusd {

struct RequestTarget {
    std::string path;
    std::vector<std::pair<std::string, std::string>> parameters;  // decoded, in order
};

// Splits "/gpu/get_power?gpu_ids=0,1" and percent-decodes the parameters
// ('+' is a space, as in forms). nullopt for an undecodable target.
[[nodiscard]] std::optional<RequestTarget> parse_target(std::string_view target);

struct QueryError {
    std::string message;  // the whole plain-text body
};

// The parameters of one route, checked against the names it accepts.
class Query {
  public:
    // Checks for unknown and repeated names; `allowed` in the route's order.
    static std::variant<Query, QueryError> check(const RequestTarget& target, std::span<const std::string_view> allowed);
    static std::variant<Query, QueryError> check(const RequestTarget& target,
                                                 std::initializer_list<std::string_view> allowed) {
        return check(target, std::span<const std::string_view>(allowed.begin(), allowed.size()));
    }

    [[nodiscard]] std::optional<std::string_view> raw(std::string_view name) const;
    // Each returns the value, or sets `error` (first failure wins) and returns nothing.
    std::optional<bool> required_bool(std::string_view name);
    std::optional<std::uint32_t> required_u32(std::string_view name);
    std::optional<std::string_view> required_string(std::string_view name);
    [[nodiscard]] const std::optional<QueryError>& error() const { return error_; }

  private:
    void fail(std::string message);

    std::map<std::string, std::string, std::less<>> values_;
    std::optional<QueryError> error_;
};

// Id lists: "0, 2,1" -> {0, 1, 2} (trimmed, sorted, deduplicated). The
// errors are the original's JSON messages, with `noun` "GPU" or "CPU".
struct IdListError {
    std::string message;
};
[[nodiscard]] std::variant<std::vector<unsigned>, IdListError> parse_id_list(std::string_view text,
                                                                            std::string_view parameter,
                                                                            std::string_view noun);

}  // namespace zeus::zeusd
