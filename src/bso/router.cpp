#include "bso/router.hpp"

#include "bso/job_json.hpp"
#include "http_server/fastapi.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

namespace zeus::bso {
namespace {

namespace http = http_server::http;
using http_server::Response;
using nlohmann::json;

// A request that fails validation: FastAPI's 422 body.
using http_server::fastapi::invalid;
using http_server::fastapi::ValidationError;

Response error_message(int status, const std::string& message) {
    return Response::json(json{{"message", message}}.dump(), static_cast<http::status>(status));
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
    static std::int64_t to_integer(const json& v, const char* name, const std::string& index = "") {
        std::vector<std::string> loc{"body", name};
        if (!index.empty()) loc.push_back(index);
        if (v.is_number_integer()) return v.get<std::int64_t>();
        if (v.is_number_float() && std::isfinite(v.get<double>())) return static_cast<std::int64_t>(v.get<double>());
        throw invalid(loc, "value is not a valid integer", "type_error.integer");
    }
    static double to_number(const json& v, const char* name) {
        if (v.is_number()) return v.get<double>();
        throw invalid({"body", name}, "value is not a valid float", "type_error.float");
    }

    const json& body_;
};

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
    if (s.default_batch_size <= 0) throw invalid({"body", "default_batch_size"}, "ensure this value is greater than 0", "value_error.number.not_gt");
    if (s.eta_knob < 0 || s.eta_knob > 1) throw invalid({"body", "eta_knob"}, "eta_knob should be in range [0,1]");
    if (s.beta_knob && !(*s.beta_knob > 0))
        throw invalid({"body", "beta_knob"}, "Invalid beta_knob(" + json(*s.beta_knob).dump() +
                                                 "). To disable early stop, set beta_knob = None to disable or positive value.");
    if (s.max_epochs <= 0) throw invalid({"body", "max_epochs"}, "ensure this value is greater than 0", "value_error.number.not_gt");
    if (s.num_pruning_rounds < 0)
        throw invalid({"body", "num_pruning_rounds"}, "ensure this value is greater than or equal to 0", "value_error.number.not_ge");
    if (s.mab_num_explorations < 0)
        throw invalid({"body", "mab_num_explorations"}, "ensure this value is greater than or equal to 0", "value_error.number.not_ge");
    if (s.mab_seed && *s.mab_seed < 0) throw invalid({"body", "mab_seed"}, "a seed must be a non-negative integer (numpy's rule)");
    if (std::find(s.batch_sizes.begin(), s.batch_sizes.end(), s.default_batch_size) == s.batch_sizes.end())
        throw invalid({"body", "__root__"}, "Default BS(" + std::to_string(s.default_batch_size) + ") not in batch_sizes(" +
                                                json(s.batch_sizes).dump() + ").");
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
    const auto question = target.find('?');
    const std::string_view path = target.substr(0, question);
    const std::string_view query = question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);
    const auto method = request.method();
    try {
        if (path == "/jobs" && method == http::verb::post) {
            const auto body = parse_body(request);
            const auto registration = service_.register_job(parse_job_spec(body));
            return Response::json(job_spec_json(registration.job).dump(),
                                  registration.created ? http::status::created : http::status::ok);
        }
        if (path == "/jobs" && method == http::verb::delete_) {
            service_.delete_job(require_job_id_query(query));
            return Response::json("null");
        }
        if (path == "/jobs/batch_size" && method == http::verb::get) {
            return Response::json(trial_id_json(service_.predict(require_job_id_query(query))).dump());
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
            return Response::json(
                json{{"stop_train", response.stop_train}, {"converged", response.converged}, {"message", response.message}}.dump());
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
        return Response::json(json{{"detail", e.detail()}}.dump(), http::status::unprocessable_entity);
    } catch (const BsoError& e) {
        return error_message(e.status(), e.what());
    } catch (const std::exception& e) {
        // The original answers any other failure (a database error) 500 {"message": str(err)}.
        return error_message(500, e.what());
    }
}

}  // namespace zeus::bso
