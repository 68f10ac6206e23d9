#include "http_server/fastapi.hpp"

#include "http_server/percent_decode.hpp"

namespace zeus::http_server::fastapi {

ValidationError invalid(const std::vector<std::string>& loc, const std::string& msg, const std::string& type) {
    nlohmann::json location = nlohmann::json::array();
    for (const auto& part : loc) location.push_back(part);
    return ValidationError(nlohmann::json::array({{{"loc", location}, {"msg", msg}, {"type", type}}}));
}

nlohmann::json json_body(const Request& request) {
    try {
        return nlohmann::json::parse(request.body());
    } catch (const nlohmann::json::parse_error& e) {
        // As FastAPI answers: the offset is Python's (0-based, of the
        // offending character; nlohmann counts the characters read), the
        // reason nlohmann's without its exception id.
        std::string reason = e.what();
        if (const auto end_of_id = reason.find("] "); reason.starts_with("[json.exception") && end_of_id != std::string::npos)
            reason.erase(0, end_of_id + 2);
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        throw ValidationError(nlohmann::json::array({{{"type", "json_invalid"},
                                                      {"loc", {"body", offset}},
                                                      {"msg", "JSON decode error"},
                                                      {"input", nlohmann::json::object()},
                                                      {"ctx", {{"error", reason}}}}}));
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
    }
    return value;
}

}  // namespace zeus::http_server::fastapi
