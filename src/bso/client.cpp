#include "zeus/bso/client.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "bso/job_json.hpp"
#include "zeus/platform/http_client.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::bso {
namespace {

using nlohmann::json;

// The original's window name, typo included, so window logs line up.
constexpr const char* kWindow = "BatciSizeOptimizerClient";

[[noreturn]] void fail(const std::string& message, const std::string& hint = "") {
    throw ZeusError(Error{ErrorCode::InvalidState, message, hint, 0});
}

}  // namespace

Result<GpuConfig> gpu_config(const Gpus& gpus, const std::vector<unsigned>& gpu_indices) {
    if (gpus.size() == 0 || gpu_indices.empty())
        return Error{ErrorCode::NotFound, "No GPUs detected.", "the batch-size optimizer needs the GPUs it trains on", 0};
    auto constraints = gpus[0].power_limit_constraints();
    if (!constraints) return constraints.error();
    GpuConfig config;
    // max_power_limit(GPU 0) // 1000 * len(gpu_indices), as the original client sends it.
    config.max_power = static_cast<double>(constraints.value().max.count() / 1000) * static_cast<double>(gpu_indices.size());
    config.number_of_gpus = static_cast<std::int64_t>(gpu_indices.size());
    config.gpu_model = gpus[0].identity().name;
    return config;
}

BatchSizeOptimizer::BatchSizeOptimizer(EnergyMonitor& monitor, std::string server_url, JobSpec job, GpuConfig gpus, int rank)
    : monitor_(monitor), job_(std::move(job)), rank_(rank) {
    HttpEndpoint endpoint;
    endpoint.base_url = server_url;
    endpoint.name = "batch-size optimizer server at " + server_url;
    endpoint.unreachable_fix = "start it with `zeus bso-server` or check the URL";
    http_ = std::make_unique<HttpClient>(std::move(endpoint));
    json spec = job_spec_json(job_);
    spec["max_power"] = gpus.max_power;
    spec["number_of_gpus"] = gpus.number_of_gpus;
    spec["gpu_model"] = gpus.gpu_model;
    const json created = json::parse(call("POST", "/jobs", json_text(spec)));
    job_.job_id = created.at("job_id").get<std::string>();
    job_.batch_sizes = created.at("batch_sizes").get<std::vector<std::int64_t>>();
}

BatchSizeOptimizer::~BatchSizeOptimizer() {
    if (trial_number_ == 0) return;
    try {
        call("PATCH", "/trials",
             json_text(json{{"job_id", *job_.job_id}, {"batch_size", batch_size_}, {"trial_number", trial_number_}}));
    } catch (const std::exception&) {
        // The server keeps the trial Dispatched; nothing else to do at exit.
    }
}

std::string BatchSizeOptimizer::call(std::string_view method, const std::string& target, const std::string& body) {
    HttpRequest request;
    request.method = method;
    request.target = target;
    request.body = body;
    if (!body.empty()) request.content_type = "application/json";
    auto reply = http_->request(request);
    if (!reply) throw ZeusError(reply.error());
    if (reply.value().status < 200 || reply.value().status >= 300)
        fail(fmt::format("Zeus server returned status code {}: {}", reply.value().status, reply.value().body));
    return reply.value().body;
}

std::int64_t BatchSizeOptimizer::get_batch_size() {
    if (rank_ != 0) fail("Only rank 0 gpu can ask for a batch size.");
    if (batch_size_ != 0) return batch_size_;
    epoch_ = 0;
    const json trial = json::parse(call("GET", "/jobs/batch_size?job_id=" + *job_.job_id, ""));
    const auto bs = trial.at("batch_size").get<std::int64_t>();
    if (std::find(job_.batch_sizes.begin(), job_.batch_sizes.end(), bs) == job_.batch_sizes.end())
        fail(fmt::format("Zeus server returned a strange batch_size: {}", bs));
    batch_size_ = bs;
    trial_number_ = trial.at("trial_number").get<std::int64_t>();
    return bs;
}

void BatchSizeOptimizer::on_train_begin() {
    training_finished_ = false;
    if (auto begun = monitor_.begin_window(kWindow); !begun) throw ZeusError(begun.error());
}

void BatchSizeOptimizer::on_evaluate(double metric) {
    if (batch_size_ == 0) fail("Call get_batch_size to set the batch size first");
    if (training_finished_) return;
    ++epoch_;
    auto measurement = monitor_.end_window(kWindow);
    if (!measurement) throw ZeusError(measurement.error());
    running_time_ += measurement.value().time.count();
    consumed_energy_ += measurement.value().total_energy().count();
    const json result{{"job_id", *job_.job_id}, {"batch_size", batch_size_}, {"trial_number", trial_number_},
                      {"time", running_time_}, {"energy", consumed_energy_}, {"metric", metric},
                      {"current_epoch", epoch_}};
    const json response = json::parse(call("POST", "/report", json_text(result)));
    if (!response.at("stop_train").get<bool>()) {
        // Reopened after the report, so the HTTP call is not measured.
        if (auto begun = monitor_.begin_window(kWindow); !begun) throw ZeusError(begun.error());
        return;
    }
    training_finished_ = true;
    if (!response.at("converged").get<bool>())
        throw TrainFailError("Train failed: " + response.at("message").get<std::string>() +
                             " This batch size will not be selected again. Please re-launch the training");
}

}  // namespace zeus::bso
