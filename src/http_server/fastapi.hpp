// What the servers standing in for the original's FastAPI apps (the
// batch-size optimizer's, Perseus's) share: FastAPI's 422 validation errors,
// JSON bodies and query parameters, read as Starlette reads them.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_server/message.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::http_server::fastapi {

// A request that does not fit its model: answered 422 {"detail": detail()}.
class ValidationError : public std::runtime_error {
  public:
    explicit ValidationError(nlohmann::json detail)
        : std::runtime_error(json_text(detail)), detail_(std::move(detail)) {}
    [[nodiscard]] const nlohmann::json& detail() const { return detail_; }

  private:
    nlohmann::json detail_;
};

// One validation problem: [{"loc": loc, "msg": msg, "type": type}].
[[nodiscard]] ValidationError invalid(const std::vector<std::string>& loc, const std::string& msg,
                                      const std::string& type = "value_error");

// The request's body as JSON; when it is not, ValidationError with FastAPI's
// detail: type json_invalid, loc ["body", offset], msg "JSON decode error".
// A body nesting deeper than kMaxJsonDepth (json_limits.hpp) is a
// ValidationError at loc ["body"], refused before it is built.
[[nodiscard]] nlohmann::json json_body(const Request& request);

// The value of `name` in a query string, percent-decoded; the last one wins,
// as in Starlette. nullopt when absent; ValidationError (loc ["query", name])
// for a value that is not valid percent-encoded UTF-8 ("%FF", "%4").
[[nodiscard]] std::optional<std::string> query_parameter(std::string_view query, std::string_view name);

}  // namespace zeus::http_server::fastapi
