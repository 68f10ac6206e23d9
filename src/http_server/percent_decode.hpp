// Decoding of URL query components (application/x-www-form-urlencoded), the
// one rule every server of the project applies to paths and query strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zeus::http_server {

// "%41+b" -> "A b". nullopt for a malformed escape ("%4", "%zz") and for a
// result that is not UTF-8 ("%FF"): ids decoded here end up in JSON answers.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view text);

}  // namespace zeus::http_server
