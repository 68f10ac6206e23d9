#include "zeus/perseus/pipeline_frequency.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "zeus/platform/http_client.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::perseus {

namespace {

using nlohmann::json;

Error invalid(std::string message, std::string hint = "") {
    return Error{ErrorCode::InvalidArgument, std::move(message), std::move(hint), 0};
}

// A job id in a path: '+' and unreserved characters as they are (the
// original sends the id raw), anything else %XX.
std::string path_escape(const std::string& text) {
    std::string out;
    for (const unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+') {
            out += static_cast<char>(c);
        } else {
            char escaped[4];
            std::snprintf(escaped, sizeof escaped, "%%%02X", c);
            out += escaped;
        }
    }
    return out;
}

// POST/GET one PFO route; the parsed JSON answer, or an error naming the route and the server's words.
Result<json> call(HttpClient& client, std::string_view method, const std::string& target, const json* body,
                  std::chrono::milliseconds timeout) {
    HttpRequest request;
    request.method = method;
    request.target = target;
    request.timeout = timeout;
    if (body) {
        request.body = body->dump();
        request.content_type = "application/json";
    }
    auto reply = client.request(request);
    if (!reply) return reply.error();
    if (reply->status != 200)
        return Error{ErrorCode::Unknown,
                     "PFO server returned status code " + std::to_string(reply->status) + " for " + target + ": " +
                         reply->body,
                     "", 0};
    try {
        return json::parse(reply->body);
    } catch (const json::parse_error&) {
        return Error{ErrorCode::Unknown, "PFO server answered " + target + " with something that is not JSON", "", 0};
    }
}

}  // namespace

Result<std::unique_ptr<FrequencyController>> FrequencyController::create(Gpu& gpu) {
    std::unique_ptr<FrequencyController> controller(new FrequencyController(gpu));
    (void)gpu.reset_power_limit();  // the original resets it; a GPU that cannot is still usable
    auto memory = gpu.supported_memory_clocks();
    if (!memory || memory->empty())
        return memory ? invalid("the GPU reports no supported memory clocks") : memory.error();
    const auto max_memory = *std::max_element(memory->begin(), memory->end());
    if (auto locked = gpu.set_memory_locked_clocks(max_memory, max_memory); !locked && locked.error().code != ErrorCode::NotSupported)
        return locked.error();
    auto graphics = gpu.supported_graphics_clocks(max_memory);
    if (!graphics || graphics->empty())
        return graphics ? invalid("the GPU reports no supported graphics clocks") : graphics.error();
    const auto max_graphics = *std::max_element(graphics->begin(), graphics->end());
    if (auto locked = gpu.set_gpu_locked_clocks(max_graphics, max_graphics); !locked) {
        (void)gpu.reset_memory_locked_clocks();
        return locked.error();
    }
    controller->current_ = max_graphics.count();
    return controller;
}

FrequencyController::~FrequencyController() { (void)end(); }

Status FrequencyController::set_frequency(long long mhz) {
    if (mhz == 0 || mhz == current_) return {};
    if (ended_) return Error{ErrorCode::InvalidArgument, "the frequency controller has ended", "", 0};
    if (auto set = gpu_.set_gpu_locked_clocks(Megahertz(mhz), Megahertz(mhz)); !set) return set;
    current_ = mhz;
    ++changes_;
    return {};
}

Status FrequencyController::end() {
    if (ended_) return {};
    ended_ = true;
    const Status memory = gpu_.reset_memory_locked_clocks();
    const Status graphics = gpu_.reset_gpu_locked_clocks();
    if (!graphics) return graphics;
    if (!memory && memory.error().code != ErrorCode::NotSupported) return memory;
    return {};
}

Result<std::unique_ptr<PipelineFrequencyOptimizer>> PipelineFrequencyOptimizer::create(
    Gpu& gpu, const PipelineFrequencyOptions& options) {
    if (options.server_url.empty())
        return invalid("no PFO server URL", "pass the URL of `zeus perseus-server`, e.g. http://127.0.0.1:8000");
    if (options.rank >= options.world_size)
        return invalid("rank " + std::to_string(options.rank) + " is outside the world of " +
                       std::to_string(options.world_size) + " ranks");
    if (options.world_size > 1 && !options.share_job_id)
        return invalid("a job of several ranks needs share_job_id to pass rank 0's job id to the others");
    HttpEndpoint endpoint;
    endpoint.base_url = options.server_url;
    endpoint.name = "the PFO server at " + options.server_url;
    endpoint.unreachable_fix = "start it with `zeus perseus-server --solution FILE` and check the URL";
    HttpClient client(endpoint);
    const auto quick = std::chrono::seconds(60);

    std::optional<std::string> registered;
    if (options.rank == 0) {
        json job{{"job_id", ""},
                 {"pp_degree", options.pp_degree},
                 {"dp_degree", options.dp_degree},
                 {"tp_degree", options.tp_degree},
                 {"world_size", options.world_size},
                 {"job_metadata", options.job_metadata ? json(*options.job_metadata) : json(nullptr)}};
        auto id = call(client, "POST", "/register_job", &job, quick);
        if (!id) return id.error();
        if (!id->is_string()) return invalid("PFO server returned a strange job ID: " + id->dump());
        registered = id->get<std::string>();
    }
    std::unique_ptr<PipelineFrequencyOptimizer> self(new PipelineFrequencyOptimizer());
    if (options.share_job_id) {
        auto shared = options.share_job_id(registered);
        if (!shared) return shared.error();
        self->job_id_ = *shared;
    } else {
        self->job_id_ = *registered;
    }

    auto memory = gpu.supported_memory_clocks();
    if (!memory || memory->empty()) return memory ? invalid("the GPU reports no supported memory clocks") : memory.error();
    auto graphics = gpu.supported_graphics_clocks(*std::max_element(memory->begin(), memory->end()));
    if (!graphics) return graphics.error();
    json freqs = json::array();
    auto sorted = *graphics;
    std::sort(sorted.begin(), sorted.end(), [](Megahertz a, Megahertz b) { return a > b; });
    for (const auto f : sorted) freqs.push_back(f.count());
    json rank{{"rank", options.rank},       {"dp_rank", options.dp_rank}, {"pp_rank", options.pp_rank},
              {"tp_rank", options.tp_rank}, {"available_frequencies", freqs}};
    const std::string job = path_escape(self->job_id_);
    if (auto done = call(client, "POST", "/register_rank/" + job, &rank, quick); !done) return done.error();

    auto controller = FrequencyController::create(gpu);
    if (!controller) return controller.error();
    self->controller_ = std::move(controller).value();

    // Blocks until every rank has asked; 0 = no time limit in curl.
    auto schedule = call(client, "GET", "/schedule/" + job + "?rank=" + std::to_string(options.rank), nullptr,
                         std::chrono::milliseconds(0));
    if (!schedule) return schedule.error();
    try {
        if (schedule->at("rank").get<std::size_t>() != options.rank)
            return invalid("PFO server returned a schedule for rank " + json_text(schedule->at("rank")) + " to rank " +
                           std::to_string(options.rank));
        for (const auto& pair : schedule->at("frequencies"))
            self->schedule_.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<long long>());
    } catch (const json::exception& e) {
        return invalid(std::string("PFO server returned a malformed schedule: ") + e.what());
    }
    return self;
}

Status PipelineFrequencyOptimizer::on_step_end() {
    if (next_ < schedule_.size()) {
        const auto& [name, freq] = schedule_[next_];
        return invalid("PFO server returned more frequencies than expected. Next expected instruction and frequency is ('" +
                       name + "', " + std::to_string(freq) + ")");
    }
    next_ = 0;
    return {};
}

Status PipelineFrequencyOptimizer::on_instruction_begin(const std::string& name) {
    if (next_ >= schedule_.size()) return invalid("PFO server returned fewer frequencies than expected");
    const auto& [instruction, freq] = schedule_[next_];
    if (instruction != name)
        return invalid("The next expected instruction is " + instruction + ", not " + name);
    ++next_;
    return controller_->set_frequency(freq);
}

}  // namespace zeus::perseus
