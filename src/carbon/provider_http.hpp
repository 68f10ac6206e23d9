// What the ElectricityMaps and OpenEI providers share: one GET through the
// project's HTTP client, and an answer that is not 200 turned into an error
// that quotes the provider's own message.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "zeus/platform/error.hpp"
#include "zeus/platform/http_client.hpp"

namespace zeus::carbon {

// An HTTP client for an internet API at `base_url` (a proxy the user set applies).
[[nodiscard]] std::unique_ptr<HttpClient> api_client(const std::string& base_url, const std::string& name,
                                                     std::vector<std::string> headers);

// GET `target`, expecting 200 and a JSON body. `what` names the request in
// errors ("ElectricityMaps history for zone XX"); `fix_for_4xx` is the hint
// when the provider rejects the request.
[[nodiscard]] Result<nlohmann::json> get_json(HttpClient& client, const std::string& target, const std::string& what,
                                              const std::string& fix_for_4xx);

// `text` cut to at most `limit` characters, for quoting answers in errors.
[[nodiscard]] std::string excerpt(const std::string& text, std::size_t limit = 300);

// "a%20b" for query values.
[[nodiscard]] std::string url_encode(const std::string& value);

}  // namespace zeus::carbon
