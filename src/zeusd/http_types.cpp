#include "zeusd/http_types.hpp"

#include <nlohmann/json.hpp>

#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {

Response error_response(http::status status, const std::string& message) {
    // Messages may quote the request (a path or id list with bytes that are
    // not UTF-8, e.g. %FF): those become U+FFFD instead of making dump()
    // throw, which would end a worker thread and the daemon with it.
    return Response::json(json_text(nlohmann::json{{"error", message}}), status);
}

}  // namespace zeus::zeusd
