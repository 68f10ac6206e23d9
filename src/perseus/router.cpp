#include "perseus/router.hpp"

#include <ctime>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "http_server/percent_decode.hpp"
#include "perseus/model_json.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::perseus {

namespace {

namespace http = http_server::http;
using http_server::Response;
using nlohmann::json;

Response detail(http::status status, const json& what) {
    return Response::json(json_text(json{{"detail", what}}), status);
}

// A path segment: %XX escapes decoded, '+' kept (job ids hold '+'; only
// query strings turn it into a space).
std::optional<std::string> path_segment(std::string_view raw) {
    std::string escaped;
    for (const char c : raw) {
        if (c == '+') escaped += "%2B";
        else escaped += c;
    }
    return http_server::percent_decode(escaped);
}

std::size_t rank_parameter(std::string_view query) {
    const auto value = http_server::fastapi::query_parameter(query, "rank");
    if (!value) throw invalid({"query", "rank"}, "field required", "value_error.missing");
    try {
        std::size_t used = 0;
        const long long rank = std::stoll(*value, &used);
        if (used == value->size() && rank >= 0) return static_cast<std::size_t>(rank);
    } catch (const std::exception&) {
    }
    throw invalid({"query", "rank"}, "value is not a valid non-negative integer", "type_error.integer");
}

Response schedule_response(ScheduleOutcome outcome) {
    if (const auto* error = std::get_if<PfoError>(&outcome))
        return detail(static_cast<http::status>(error->status()), error->what());
    return Response::json(json_text(to_json(std::get<FrequencySchedule>(outcome))));
}

}  // namespace

void Router::handle(const http_server::Request& request, const http_server::Respond& respond) {
    const std::string_view target = request.target();
    const http_server::TargetParts parts = http_server::split_target(target);
    const std::string_view path = parts.path;
    const std::string_view query = parts.query;
    // "/register_rank/{job_id}" -> ("register_rank", job_id)
    const auto route = [&](std::string_view prefix) -> std::optional<std::string> {
        if (!path.starts_with(prefix) || path.size() == prefix.size()) return std::nullopt;
        const auto rest = path.substr(prefix.size());
        if (rest.find('/') != std::string_view::npos) return std::nullopt;
        auto segment = path_segment(rest);
        if (!segment) {
            throw invalid({"path", "job_id"},
                          "not valid percent-encoded UTF-8 (a '%' needs two hex digits, and the bytes must be UTF-8 "
                          "text)",
                          "value_error.str.encoding");
        }
        return segment;
    };
    const auto method_is = [&](http::verb verb) {
        if (request.method() == verb) return true;
        respond(detail(http::status::method_not_allowed, "Method Not Allowed"));
        return false;
    };
    try {
        if (path == "/register_job") {
            if (!method_is(http::verb::post)) return;
            const std::string id = jobs_.register_job(job_info_from_json(http_server::fastapi::json_body(request)), std::time(nullptr));
            respond(Response::json(json_text(json(id))));
        } else if (const auto job_id = route("/register_rank/")) {
            if (!method_is(http::verb::post)) return;
            jobs_.register_rank(*job_id, rank_info_from_json(http_server::fastapi::json_body(request)));
            respond(Response::json("null"));
        } else if (const auto schedule_job = route("/schedule/")) {
            if (!method_is(http::verb::get)) return;
            const std::size_t rank = rank_parameter(query);
            jobs_.request_schedule(*schedule_job, rank,
                                   [respond](ScheduleOutcome outcome) { respond(schedule_response(std::move(outcome))); });
        } else if (const auto result_job = route("/result/")) {
            if (!method_is(http::verb::post)) return;
            jobs_.report_result(*result_job, profiling_result_from_json(http_server::fastapi::json_body(request)));
            respond(Response::json("null"));
        } else {
            respond(detail(http::status::not_found, "Not Found"));
        }
    } catch (const ValidationError& e) {
        respond(detail(http::status::unprocessable_entity, e.detail()));
    } catch (const PfoError& e) {
        respond(detail(static_cast<http::status>(e.status()), e.what()));
    }
}

}  // namespace zeus::perseus
