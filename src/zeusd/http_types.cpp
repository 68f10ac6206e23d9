#include "zeusd/http_types.hpp"

#include <nlohmann/json.hpp>

namespace zeus::zeusd {

Response error_response(http::status status, const std::string& message) {
    // Messages may quote the request (a path or id list with bytes that are
    // not UTF-8, e.g. %FF): those become U+FFFD instead of making dump()
    // throw, which would end a worker thread and the daemon with it.
    return Response::json(
        nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), status);
}

}  // namespace zeus::zeusd
