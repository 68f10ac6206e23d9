#include "bso/router.hpp"

#include "bso/job_json.hpp"
#include "http_server/fastapi.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "zeus/platform/utf8.hpp"

namespace zeus::bso {
namespace {

namespace http = http_server::http;
using http_server::Response;
using nlohmann::json;

// A request that fails validation: FastAPI's 422 body.
using http_server::fastapi::invalid;
using http_server::fastapi::ValidationError;

// A 503 (the database is unreachable or locked for now) says when to retry.
Response error_message(int status, const std::string& message) {
    auto response = Response::json(json_text(json{{"message", message}}), static_cast<http::status>(status));
    if (status == 503) response.headers.emplace_back("Retry-After", "1");
    return response;
}

// Field readers with pydantic v1's coercions for the types the API uses.
class Fields {
public:
    explicit Fields(const json& body) : body_(body) {}

    std::string string(const char* name) const {
        const json& v = required(name);
        if (!v.is_string()) throw invalid({"body", name}, "str type expected", "type_error.str");
        return v.get<std::string>();
    }
    std::optional<std::string> optional_string(const char* name) const {
        if (!present(name)) return std::nullopt;
        return string(name);
    }
    std::int64_t integer(const char* name) const { return to_integer(required(name), name); }
    std::int64_t integer(const char* name, std::int64_t fallback) const {
        return present(name) ? integer(name) : fallback;
    }
    std::optional<std::int64_t> optional_integer(const char* name) const {
        if (!present(name)) return std::nullopt;
        return integer(name);
    }
    double number(const char* name) const { return to_number(required(name), name); }
    double number(const char* name, double fallback) const { return present(name) ? number(name) : fallback; }
    std::optional<double> optional_number(const char* name, std::optional<double> fallback) const {
        if (!body_.contains(name)) return fallback;
        if (body_.at(name).is_null()) return std::nullopt;
        return number(name);
    }
    bool boolean(const char* name, bool fallback) const {
        if (!present(name)) return fallback;
        const json& v = body_.at(name);
        if (v.is_boolean()) return v.get<bool>();
        if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1)) return v.get<std::int64_t>() == 1;
        throw invalid({"body", name}, "value could not be parsed to a boolean", "type_error.bool");
    }
    std::vector<std::int64_t> integer_list(const char* name) const {
        const json& v = required(name);
        if (!v.is_array()) throw invalid({"body", name}, "value is not a valid list", "type_error.list");
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(to_integer(v[i], name, std::to_string(i)));
        return out;
    }

private:
    bool present(const char* name) const { return body_.contains(name) && !body_.at(name).is_null(); }
    const json& required(const char* name) const {
        if (!body_.contains(name)) throw invalid({"body", name}, "field required", "value_error.missing");
        if (body_.at(name).is_null()) throw invalid({"body", name}, "none is not an allowed value", "type_error.none.not_allowed");
        return body_.at(name);
    }
    // Every integer is stored as a 64-bit one: a value outside that range
    // (9223372036854775808, 1e300) is refused, never wrapped.
    static std::int64_t to_integer(const json& v, const char* name, const std::string& index = "") {
        std::vector<std::string> loc{"body", name};
        if (!index.empty()) loc.push_back(index);
        const auto out_of_range = [&] {
            return invalid(loc, "ensure this value is between -9223372036854775808 and 9223372036854775807",
                           "value_error.number.out_of_range");
        };
        if (v.is_number_unsigned()) {
            if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                throw out_of_range();
            return v.get<std::int64_t>();
        }
        if (v.is_number_integer()) return v.get<std::int64_t>();
        if (v.is_number_float() && std::isfinite(v.get<double>())) {
            // pydantic v1 truncates a float; 2^63 itself is already out of range.
            const double truncated = std::trunc(v.get<double>());
            if (truncated >= 9223372036854775808.0 || truncated < -9223372036854775808.0) throw out_of_range();
            return static_cast<std::int64_t>(truncated);
        }
        throw invalid(loc, "value is not a valid integer", "type_error.integer");
    }
    static double to_number(const json& v, const char* name) {
        if (v.is_number()) return v.get<double>();
        throw invalid({"body", name}, "value is not a valid float", "type_error.float");
    }

    const json& body_;
};

// Characters (code points) of UTF-8 text, as PostgreSQL's VARCHAR(n) counts them.
std::size_t characters(const std::string& text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(),
                                                  [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The columns' lengths (database.cpp's schema), checked here so that both
// backends answer the same 422 (SQLite stores any length; PostgreSQL failed).
constexpr std::size_t kMaxIdCharacters = 400;
constexpr std::size_t kGeneratedSuffix = 9;  // "-" and 8 hex digits
constexpr std::size_t kMaxGpuModelCharacters = 400;

void check_length(const std::string& value, const char* field, std::size_t most) {
    if (characters(value) > most)
        throw invalid({"body", field}, "ensure this value has at most " + std::to_string(most) + " characters",
                      "value_error.any_str.max_length");
}

json parse_body(const http_server::Request& request) {
    json body = http_server::fastapi::json_body(request);
    if (!body.is_object()) throw invalid({"body"}, "value is not a valid dict", "type_error.dict");
    return body;
}

JobSpec parse_job_spec(const json& body) {
    Fields f(body);
    JobSpec s;
    s.job_id = f.optional_string("job_id");
    s.job_id_prefix = f.string("job_id_prefix");
    s.batch_sizes = f.integer_list("batch_sizes");
    s.default_batch_size = f.integer("default_batch_size");
    s.eta_knob = f.number("eta_knob", 0.5);
    s.beta_knob = f.optional_number("beta_knob", 2.0);
    s.target_metric = f.number("target_metric", 0.5);
    s.higher_is_better_metric = f.boolean("higher_is_better_metric", true);
    s.max_epochs = f.integer("max_epochs", 100);
    s.num_pruning_rounds = f.integer("num_pruning_rounds", 2);
    s.window_size = f.integer("window_size", 0);
    s.mab_prior_mean = f.number("mab_prior_mean", 0.0);
    s.mab_prior_precision = f.number("mab_prior_precision", 0.0);
    s.mab_num_explorations = f.integer("mab_num_explorations", 2);
    s.mab_seed = f.optional_integer("mab_seed");
    s.max_power = f.number("max_power");
    s.number_of_gpus = f.integer("number_of_gpus");
    s.gpu_model = f.string("gpu_model");
    // The validators of JobParams, JobSpec and GpuConfig, in their order.
    if (s.batch_sizes.empty()) throw invalid({"body", "batch_sizes"}, "Batch Sizes = [] is empty");
    std::sort(s.batch_sizes.begin(), s.batch_sizes.end());
    if (const auto twice = std::adjacent_find(s.batch_sizes.begin(), s.batch_sizes.end()); twice != s.batch_sizes.end())
        throw invalid({"body", "batch_sizes"},
                      "batch size " + std::to_string(*twice) + " is listed more than once; list each batch size once",
                      "value_error.list.unique_items");
    if (s.job_id) check_length(*s.job_id, "job_id", kMaxIdCharacters);
    // A generated id is the prefix, '-' and 8 hex digits.
    check_length(s.job_id_prefix, "job_id_prefix", kMaxIdCharacters - kGeneratedSuffix);
    check_length(s.gpu_model, "gpu_model", kMaxGpuModelCharacters);
    if (s.default_batch_size <= 0) throw invalid({"body", "default_batch_size"}, "ensure this value is greater than 0", "value_error.number.not_gt");
    if (s.eta_knob < 0 || s.eta_knob > 1) throw invalid({"body", "eta_knob"}, "eta_knob should be in range [0,1]");
    if (s.beta_knob && !(*s.beta_knob > 0))
        throw invalid({"body", "beta_knob"},
                      "Invalid beta_knob(" + json_text(json(*s.beta_knob)) +
                          "). To disable early stop, set beta_knob = None to disable or positive value.");
    if (s.max_epochs <= 0) throw invalid({"body", "max_epochs"}, "ensure this value is greater than 0", "value_error.number.not_gt");
    // The original accepts 0, and such a job can never finish pruning.
    if (s.num_pruning_rounds < 1)
        throw invalid({"body", "num_pruning_rounds"},
                      "ensure this value is greater than 0 (a job with no pruning round never runs a trial)",
                      "value_error.number.not_gt");
    if (s.mab_num_explorations < 0)
        throw invalid({"body", "mab_num_explorations"}, "ensure this value is greater than or equal to 0", "value_error.number.not_ge");
    if (s.mab_seed && *s.mab_seed < 0) throw invalid({"body", "mab_seed"}, "a seed must be a non-negative integer (numpy's rule)");
    if (std::find(s.batch_sizes.begin(), s.batch_sizes.end(), s.default_batch_size) == s.batch_sizes.end())
        throw invalid({"body", "__root__"}, "Default BS(" + std::to_string(s.default_batch_size) +
                                                ") not in batch_sizes(" + json_text(json(s.batch_sizes)) + ").");
    if (s.job_id && !s.job_id->starts_with(s.job_id_prefix))
        throw invalid({"body", "__root__"}, "Job_id(" + *s.job_id + ") does not start with prefix(" + s.job_id_prefix + ").");
    if (!(s.max_power > 0)) throw invalid({"body", "max_power"}, "ensure this value is greater than 0", "value_error.number.not_gt");
    if (s.number_of_gpus <= 0) throw invalid({"body", "number_of_gpus"}, "ensure this value is greater than 0", "value_error.number.not_gt");
    if (s.gpu_model.empty()) throw invalid({"body", "gpu_model"}, "Invalid gpu_model(). Shouldn't be empty.");
    return s;
}

TrialIdentity parse_trial_id(const Fields& f) {
    return {f.string("job_id"), f.integer("batch_size"), f.integer("trial_number")};
}

json trial_id_json(const TrialIdentity& t) {
    return json{{"job_id", t.job_id}, {"batch_size", t.batch_size}, {"trial_number", t.trial_number}};
}

std::string require_job_id_query(std::string_view query) {
    auto job_id = http_server::fastapi::query_parameter(query, "job_id");
    if (!job_id) throw invalid({"query", "job_id"}, "field required", "value_error.missing");
    return *job_id;
}

}  // namespace

Response Router::handle(const http_server::Request& request) {
    const std::string_view target = request.target();
    const http_server::TargetParts parts = http_server::split_target(target);
    const std::string_view path = parts.path;
    const std::string_view query = parts.query;
    const auto method = request.method();
    try {
        if (path == "/jobs" && method == http::verb::post) {
            const auto body = parse_body(request);
            const auto registration = service_.register_job(parse_job_spec(body));
            return Response::json(json_text(job_spec_json(registration.job)),
                                  registration.created ? http::status::created : http::status::ok);
        }
        if (path == "/jobs" && method == http::verb::delete_) {
            service_.delete_job(require_job_id_query(query));
            return Response::json("null");
        }
        if (path == "/jobs/batch_size" && method == http::verb::get) {
            return Response::json(json_text(trial_id_json(service_.predict(require_job_id_query(query)))));
        }
        if (path == "/report" && method == http::verb::post) {
            const auto body = parse_body(request);
            Fields f(body);
            TrainingResult result;
            result.trial = parse_trial_id(f);
            result.progress.batch_size = result.trial.batch_size;
            result.progress.time = f.number("time");
            result.progress.energy = f.number("energy");
            result.progress.metric = f.number("metric");
            result.progress.current_epoch = f.integer("current_epoch");
            const auto response = service_.report(result);
            return Response::json(json_text(json{{"stop_train", response.stop_train},
                                                 {"converged", response.converged},
                                                 {"message", response.message}}));
        }
        if (path == "/trials" && method == http::verb::patch) {
            const auto body = parse_body(request);
            service_.end_trial(parse_trial_id(Fields(body)));
            return Response::json("null");
        }
        if (path == "/jobs" || path == "/jobs/batch_size" || path == "/report" || path == "/trials")
            return Response::json(R"({"detail":"Method Not Allowed"})", http::status::method_not_allowed);
        return Response::json(R"({"detail":"Not Found"})", http::status::not_found);
    } catch (const ValidationError& e) {
        return Response::json(json_text(json{{"detail", e.detail()}}), http::status::unprocessable_entity);
    } catch (const BsoError& e) {
        return error_message(e.status(), e.what());
    } catch (const std::exception& e) {
        // The original answers any other failure (a database error) 500
        // {"message": str(err)}, which quotes the SQL: the text goes to the log.
        failures_.write(log_, http_server::LogLevel::Error,
                        std::string(request.method_string()) + " " + std::string(path) + " failed: " + e.what());
        return error_message(500, "internal error (the database failed); see the server log");
    }
}

}  // namespace zeus::bso
