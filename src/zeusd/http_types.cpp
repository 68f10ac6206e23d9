#include "zeusd/http_types.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zeus::zeusd {

std::string Peer::describe() const {
    if (pid) return fmt::format("pid {} uid {} gid {}", *pid, uid.value_or(0), gid.value_or(0));
    return address;
}

Response Response::json(std::string body, http::status status) {
    Response response;
    response.status = status;
    response.body = std::move(body);
    return response;
}

Response Response::error(http::status status, const std::string& message) {
    // Messages may quote the request (a path or id list with bytes that are
    // not UTF-8, e.g. %FF): those become U+FFFD instead of making dump()
    // throw, which would end a worker thread and the daemon with it.
    return json(nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                status);
}

Response Response::text(http::status status, std::string body) {
    Response response;
    response.status = status;
    response.content_type = "text/plain; charset=utf-8";
    response.body = std::move(body);
    return response;
}

Response Response::empty_ok() {
    Response response;
    response.content_type.clear();
    return response;
}

}  // namespace zeus::zeusd
