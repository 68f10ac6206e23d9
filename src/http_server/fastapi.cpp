#include "http_server/fastapi.hpp"

#include "http_server/json_limits.hpp"
#include "http_server/percent_decode.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::http_server::fastapi {
namespace {

// nlohmann's message without its "[json.exception.parse_error.101] " id.
std::string without_exception_id(std::string message) {
    if (const auto end = message.find("] "); message.starts_with("[json.exception") && end != std::string::npos)
        message.erase(0, end + 2);
    return message;
}

// nlohmann quotes what it read last, which in a body that is not UTF-8 is
// not text either (and would make the 422 itself fail to serialise).
std::string printable_reason(std::string reason) {
    if (is_utf8(reason)) return reason;
    if (const auto quote = reason.find("; last read:"); quote != std::string::npos) reason.erase(quote);
    return is_utf8(reason) ? reason : "the body is not valid UTF-8";
}

}  // namespace

ValidationError invalid(const std::vector<std::string>& loc, const std::string& msg, const std::string& type) {
    nlohmann::json location = nlohmann::json::array();
    for (const auto& part : loc) location.push_back(part);
    return ValidationError(nlohmann::json::array({{{"loc", location}, {"msg", msg}, {"type", type}}}));
}

nlohmann::json json_body(const Request& request) {
    try {
        return parse_json_checked(request.body());
    } catch (const nlohmann::json::parse_error& e) {
        // As FastAPI answers: the offset is Python's (0-based, of the
        // offending character; nlohmann counts the characters read), the
        // reason nlohmann's without its exception id.
        const std::string reason = printable_reason(without_exception_id(e.what()));
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        throw ValidationError(nlohmann::json::array({{{"type", "json_invalid"},
                                                      {"loc", {"body", offset}},
                                                      {"msg", "JSON decode error"},
                                                      {"input", nlohmann::json::object()},
                                                      {"ctx", {{"error", reason}}}}}));
    } catch (const nlohmann::json::out_of_range& e) {
        // A number beyond double's range (1e400): Python would read it as
        // inf, which no field of these APIs can use; say which number.
        throw invalid({"body"}, without_exception_id(e.what()) + ": give a finite number", "value_error.number.not_finite");
    } catch (const JsonLimitError& e) {
        throw invalid({"body"}, e.what(), "value_error.json_too_deep");
    }
}

std::optional<std::string> query_parameter(std::string_view query, std::string_view name) {
    std::optional<std::string> value;
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        const auto eq = pair.find('=');
        const auto key = percent_decode(pair.substr(0, eq));
        if (!key || *key != name) continue;
        value = percent_decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
        if (!value) {
            throw invalid({"query", std::string(name)},
                          "not valid percent-encoded UTF-8 (a '%' needs two hex digits, and the bytes must be "
                          "UTF-8 text)",
                          "value_error.str.encoding");
        }
    }
    return value;
}

}  // namespace zeus::http_server::fastapi
