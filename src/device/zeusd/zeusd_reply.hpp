// Turning zeusd's answers into values or Errors: the daemon's own words from
// any of its error body shapes, the HTTP status, and a fix that fits it; and
// checked JSON access that names what is missing instead of defaulting to 0.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "zeus/platform/http_client.hpp"
#include "zeus/device/zeusd_client.hpp"

namespace zeus::zeusd_backend {

// What the daemon said, from `{"error": "..."}`, `{"errors": {"<id>": "..."}}`
// (per-device errors, prefixed "GPU <id>"/"CPU <id>" after the route) or a
// plain-text body (the original's parameter-parsing errors).
[[nodiscard]] std::string daemon_words(const HttpReply& reply, std::string_view target);

// The Error for a non-200 answer: "Failed to <op>: zeusd at <endpoint>
// answered <status> to <method> <target>: <daemon words>", with a code and
// fix that fit the status. vendor_code holds the HTTP status.
[[nodiscard]] Error http_error(const ZeusdConfig& config, std::string_view op, std::string_view method,
                               const std::string& target, const HttpReply& reply);

// A 200 answer whose body is not what the API promises.
[[nodiscard]] Error malformed_reply(const ZeusdConfig& config, std::string_view op, const std::string& target,
                                    std::string_view problem);

// The body as JSON, or malformed_reply.
[[nodiscard]] Result<nlohmann::json> parse_body(const ZeusdConfig& config, std::string_view op,
                                                const std::string& target, const HttpReply& reply);

// A non-negative integer that fits in `max`, or the problem in words.
[[nodiscard]] Result<std::uint64_t> unsigned_field(const nlohmann::json& object, std::string_view key,
                                                   std::uint64_t max);

// "0" -> 0; anything else is an error message.
[[nodiscard]] Result<unsigned> id_key(std::string_view key);

}  // namespace zeus::zeusd_backend
