#include "carbon/provider_http.hpp"

#include <fmt/format.h>

namespace zeus::carbon {

std::unique_ptr<HttpClient> api_client(const std::string& base_url, const std::string& name,
                                       std::vector<std::string> headers) {
    HttpEndpoint endpoint;
    endpoint.base_url = base_url;
    while (!endpoint.base_url.empty() && endpoint.base_url.back() == '/') endpoint.base_url.pop_back();
    endpoint.name = fmt::format("{} at {}", name, endpoint.base_url);
    endpoint.unreachable_fix =
        "check the network (and https_proxy), or work offline with a constant or a file (docs/carbon-and-cost.md)";
    endpoint.timeout_fix = endpoint.unreachable_fix;
    endpoint.headers = std::move(headers);
    endpoint.bypass_proxy = false;
    return std::make_unique<HttpClient>(std::move(endpoint));
}

std::string excerpt(const std::string& text, std::size_t limit) {
    if (text.size() <= limit) return text;
    return text.substr(0, limit) + "...";
}

std::string url_encode(const std::string& value) {
    std::string out;
    for (const unsigned char c : value) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += fmt::format("%{:02X}", c);
        }
    }
    return out;
}

namespace {

// The provider's own words from an error answer: {"error": "..."},
// {"message": "..."}, {"error": {"message": "..."}}, or the body itself.
std::string provider_message(const std::string& body) {
    const auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_object()) {
        for (const char* key : {"error", "message"}) {
            const auto it = json.find(key);
            if (it == json.end()) continue;
            if (it->is_string()) return it->get<std::string>();
            if (it->is_object() && it->contains("message") && (*it)["message"].is_string()) {
                return (*it)["message"].get<std::string>();
            }
        }
    }
    return excerpt(body);
}

}  // namespace

Result<nlohmann::json> get_json(HttpClient& client, const std::string& target, const std::string& what,
                                const std::string& fix_for_4xx) {
    HttpRequest request;
    request.target = target;
    auto reply = client.request(request);
    if (!reply) {
        Error e = reply.error();
        e.message = fmt::format("{}: {}", what, e.message);
        return e;
    }
    if (reply->status != 200) {
        const bool rejected = reply->status >= 400 && reply->status < 500;
        return Error{rejected ? ErrorCode::InvalidArgument : ErrorCode::Unavailable,
                     fmt::format("{}: {} answered HTTP {}: {}", what, client.endpoint().name, reply->status,
                                 provider_message(reply->body)),
                     rejected ? fix_for_4xx : "try again later, or work offline with a constant or a file", 0};
    }
    auto json = nlohmann::json::parse(reply->body, nullptr, false);
    if (json.is_discarded()) {
        return Error{ErrorCode::InvalidState,
                     fmt::format("{}: {} answered with something that is not JSON: {}", what, client.endpoint().name,
                                 excerpt(reply->body)),
                     "check the base URL points at the API itself, not a proxy or login page", 0};
    }
    return json;
}

}  // namespace zeus::carbon
