#include "zeus/device/zeusd_power_stream.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>

#include "device/zeusd/zeusd_client_internal.hpp"

namespace zeus {

struct ZeusdPowerStream::Stream {
    std::string key;
    std::string kind;  // "GPU" or "CPU"
    HttpEndpoint endpoint;
    std::string target;
};

namespace {

constexpr int kClockSamples = 5;

std::string joined(const std::vector<unsigned>& ids) {
    std::string out;
    for (unsigned id : ids) {
        if (!out.empty()) out += ',';
        out += std::to_string(id);
    }
    return out;
}

// The original's rule: nullopt streams what exists and may be read, empty
// streams nothing, a list must exist and be readable.
Result<bool> wanted(const std::optional<std::vector<unsigned>>& ids, const std::set<unsigned>& available, bool may_read,
                    ZeusdApiGroup scope, const char* kind, const std::string& key) {
    if (!ids) return !available.empty() && may_read;
    if (ids->empty()) return false;
    std::vector<unsigned> missing;
    for (unsigned id : *ids) {
        if (available.count(id) == 0) missing.push_back(id);
    }
    if (!missing.empty()) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("{} indices [{}] requested for {} but only [{}] are available", kind, joined(missing),
                                 key, joined(std::vector<unsigned>(available.begin(), available.end()))),
                     "list indices the daemon has (GET /discover), or None for all", 0};
    }
    if (!may_read) {
        return Error{ErrorCode::NoPermission,
                     fmt::format("Token for {} lacks required scope '{}' (explicitly requested {} indices [{}])", key,
                                 to_string(scope), kind, joined(*ids)),
                     "use a token with that scope (zeusd token issue), or enable the API group on the daemon", 0};
    }
    return true;
}

// This machine's clock minus the daemon's, in seconds: the median over round
// trips of the request's midpoint minus the daemon's answer.
Result<double> clock_offset(ZeusdClient& client) {
    std::vector<double> offsets;
    for (int i = 0; i < kClockSamples; ++i) {
        const auto before = std::chrono::system_clock::now();
        auto daemon = client.time();
        const auto after = std::chrono::system_clock::now();
        if (!daemon) return daemon.error();
        const auto midpoint = before + (after - before) / 2;
        offsets.push_back(std::chrono::duration<double>(midpoint - *daemon).count());
    }
    std::sort(offsets.begin(), offsets.end());
    return offsets[offsets.size() / 2];
}

std::optional<double> number(const nlohmann::json& event, const char* key) {
    const auto it = event.find(key);
    if (it == event.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

// A device index: a whole number that fits (1e20 or 0.5 is no index, and
// converting 1e20 to unsigned would be undefined).
std::optional<unsigned> index(const nlohmann::json& event, const char* key) {
    const auto it = event.find(key);
    if (it == event.end()) return std::nullopt;
    if (it->is_number_unsigned() && it->get<std::uint64_t>() <= std::numeric_limits<unsigned>::max()) {
        return static_cast<unsigned>(it->get<std::uint64_t>());
    }
    return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<ZeusdPowerStream>> ZeusdPowerStream::start(std::vector<ZeusdStreamSource> sources,
                                                                  std::chrono::milliseconds reconnect_delay) {
    std::set<std::string> keys;
    for (const auto& s : sources) {
        if (!keys.insert(s.key).second) {
            return Error{ErrorCode::InvalidArgument, fmt::format("Duplicate server endpoints: ['{}']", s.key),
                         "list each zeusd once", 0};
        }
    }
    std::unique_ptr<ZeusdPowerStream> fleet(new ZeusdPowerStream());
    fleet->reconnect_delay_ = reconnect_delay;
    for (const auto& source : sources) {
        auto client = ZeusdClient::connect(source.config);
        if (!client) return client.error();
        std::set<unsigned> gpus;
        std::set<unsigned> cpus;
        for (const auto& g : (*client)->discovery().gpus) gpus.insert(g.id);
        for (const auto& c : (*client)->discovery().cpus) cpus.insert(c.id);
        auto stream_gpus =
            wanted(source.gpu_ids, gpus, (*client)->can_read_gpu(), ZeusdApiGroup::GpuRead, "GPU", source.key);
        if (!stream_gpus) return stream_gpus.error();
        auto stream_cpus =
            wanted(source.cpu_ids, cpus, (*client)->can_read_cpu(), ZeusdApiGroup::CpuRead, "CPU", source.key);
        if (!stream_cpus) return stream_cpus.error();
        auto offset = clock_offset(**client);
        if (!offset) return offset.error();
        fleet->offsets_[source.key] = *offset;
        const auto add = [&](const char* kind, const char* path, const char* parameter,
                             const std::optional<std::vector<unsigned>>& ids) {
            std::string target = path;
            if (ids) target += fmt::format("?{}={}", parameter, joined(*ids));
            fleet->streams_.push_back(
                std::make_unique<Stream>(Stream{source.key, kind, zeusd_endpoint(source.config), std::move(target)}));
        };
        if (*stream_gpus) add("GPU", "/gpu/stream_power", "gpu_ids", source.gpu_ids);
        if (*stream_cpus) add("CPU", "/cpu/stream_power", "cpu_ids", source.cpu_ids);
    }
    for (const auto& stream : fleet->streams_) {
        fleet->threads_.emplace_back([self = fleet.get(), s = stream.get()] { self->run(*s); });
    }
    return fleet;
}

ZeusdPowerStream::~ZeusdPowerStream() { stop(); }

void ZeusdPowerStream::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    // One caller joins; another waits for it (two joins of one thread are undefined).
    std::lock_guard joining(join_mutex_);
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
}

bool ZeusdPowerStream::stopped() const {
    std::lock_guard lock(mutex_);
    return stopping_;
}

std::map<std::string, StreamedPower> ZeusdPowerStream::latest() const {
    std::lock_guard lock(mutex_);
    return readings_;
}

std::uint64_t ZeusdPowerStream::wait_for_update(std::uint64_t seen, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return stopping_ || updates_ > seen; });
    return updates_;
}

std::vector<std::string> ZeusdPowerStream::take_warnings() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    if (dropped_warnings_ > 0) {
        out.push_back(fmt::format("{} earlier warnings were dropped (nobody took them)", dropped_warnings_));
    }
    out.insert(out.end(), std::make_move_iterator(warnings_.begin()), std::make_move_iterator(warnings_.end()));
    warnings_.clear();
    dropped_warnings_ = 0;
    return out;
}

void ZeusdPowerStream::warn(std::string text) {
    std::lock_guard lock(mutex_);
    if (warnings_.size() == kMaxWarnings) {
        warnings_.pop_front();
        ++dropped_warnings_;
    }
    warnings_.push_back(std::move(text));
}

void ZeusdPowerStream::consume_event(const Stream& stream, const std::string& data) {
    const auto event = nlohmann::json::parse(data, nullptr, false);
    const bool gpu = stream.kind == "GPU";
    const auto malformed = [&] {
        warn(fmt::format("Malformed {} SSE event from {}: {}", stream.kind, stream.key, data.substr(0, 100)));
    };
    if (!event.is_object()) return malformed();
    const auto id = index(event, gpu ? "gpu_id" : "cpu_id");
    const auto power_mw = number(event, gpu ? "power_mw" : "cpu_mw");
    const auto ms = number(event, "timestamp_ms");
    if (!id || !power_mw || !ms) return malformed();
    const double watts = *power_mw / 1000.0;
    const double timestamp_s = *ms / 1000.0 + offsets_.at(stream.key);
    {
        std::lock_guard lock(mutex_);
        auto [it, added] = readings_.try_emplace(stream.key);
        StreamedPower& power = it->second;
        power.timestamp_s = added ? timestamp_s : std::max(power.timestamp_s, timestamp_s);
        if (gpu) {
            power.gpu_w[*id] = watts;
        } else {
            const auto dram = number(event, "dram_mw");
            power.cpu_w[*id] = StreamedCpuPower{watts, dram ? std::optional(*dram / 1000.0) : std::nullopt};
        }
        ++updates_;
    }
    changed_.notify_all();
}

void ZeusdPowerStream::consume_block(const Stream& stream, std::string_view block) {
    std::size_t at = 0;
    while (at <= block.size()) {
        const auto line_end = std::min(block.find('\n', at), block.size());
        const std::string_view line = block.substr(at, line_end - at);
        if (line.starts_with("data:")) {
            std::string_view data = line.substr(5);
            if (data.starts_with(' ')) data.remove_prefix(1);
            consume_event(stream, std::string(data));
        }
        at = line_end + 1;
    }
}

void ZeusdPowerStream::run(const Stream& stream) {
    HttpRequest request;
    request.target = stream.target;
    request.headers = {"Accept: text/event-stream"};
    const auto keep_going = [this] { return !stopped(); };
    while (!stopped()) {
        std::string buffer;
        bool overlong = false;
        const auto on_data = [&](std::string_view chunk) {
            buffer.append(chunk);
            for (auto end = buffer.find("\n\n");; end = buffer.find("\n\n")) {
                // What a peer that never ends an event can make us hold.
                if ((end == std::string::npos ? buffer.size() : end) > kMaxEventBytes) {
                    overlong = true;
                    return false;
                }
                if (end == std::string::npos) return true;
                consume_block(stream, std::string_view(buffer).substr(0, end));
                buffer.erase(0, end + 2);
            }
        };
        HttpClient http(stream.endpoint);
        auto reply = http.stream(request, on_data, keep_going);
        if (stopped()) return;
        const std::string retry =
            fmt::format("reconnecting in {:.1f} s", std::chrono::duration<double>(reconnect_delay_).count());
        if (overlong) {
            warn(fmt::format("{} SSE event from {} is over {} KiB without an end; {}", stream.kind, stream.key,
                             kMaxEventBytes >> 10U, retry));
        } else if (!reply) {
            warn(fmt::format("{} SSE connection to {} lost: {}; {}", stream.kind, stream.key, reply.error().message,
                             retry));
        } else if (reply->status == 401 || reply->status == 403) {
            warn(fmt::format("{} SSE connection to {} failed with HTTP {}: {}; not retried (check the token)",
                             stream.kind, stream.key, reply->status, reply->body.substr(0, 200)));
            return;
        } else if (reply->status != 200) {
            warn(fmt::format("{} SSE connection to {} rejected (HTTP {}: {}); {}", stream.kind, stream.key,
                             reply->status, reply->body.substr(0, 200), retry));
        } else {
            warn(fmt::format("{} SSE stream from {} ended; {}", stream.kind, stream.key, retry));
        }
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, reconnect_delay_, [&] { return stopping_; });
    }
}

}  // namespace zeus
