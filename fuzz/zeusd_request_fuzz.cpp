// libFuzzer target over zeusd's request handling: the bytes of an input are
// what a client sends on one connection. They go through Beast's
// request_parser with the server's header and body limits (as Session does),
// and every request that parses goes to Router::handle over fake GPUs and
// CPUs; the responses are then serialized as the server would. Pipelined
// requests in one input are handled in turn, as on a keep-alive connection.
//
// The first byte picks the configuration, so one corpus covers them all:
//   bit 0     authentication on (fixed HS256 key kSigningKey), else off
//   bits 1-3  enabled API groups (bit 1 gpu-control, 2 gpu-read, 3 cpu-read;
//             none set = all three, the default)
//   bit 4     a control allow-list (uid 1000) is configured
//   bit 5     the peer is uid 1000 over a Unix socket (else uid 0, or TCP)
//   bit 6     the peer is a TCP client (no credentials)
//
// Everything asynchronous (control commands queued on per-GPU strands,
// block=true completions, the one-shot CPU power timer) runs on an
// io_context that the fuzzer drains after every request, so nothing carries
// over from one input to the next and a run is reproducible. Checked after
// each request: exactly one response, a JSON body that parses whenever the
// content type says JSON, event streams only for the stream routes with
// valid ids, and no exception escaping Router::handle (which would end a
// worker thread of the daemon).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeusd/cpu_fleet.hpp"
#include "zeusd/gpu_fleet.hpp"
#include "zeusd/auth/access_policy.hpp"
#include "zeusd/log.hpp"
#include "zeusd/router.hpp"
#include "http_server/server.hpp"
#include "support/fake_gpu.hpp"
#include "zeusd/power_streams.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace zeus;
using namespace zeus::zeusd;

// The seeds' tokens are signed with this key (fuzz/make_corpus.py).
constexpr std::string_view kSigningKey = "zeusd-fuzz-signing-key";
constexpr unsigned kGpuCount = 3;
constexpr unsigned kCpuCount = 2;
constexpr int kMaxRequestsPerInput = 8;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "zeusd_request_fuzz: invariant violated: %s\n", what.c_str());
    std::abort();
}

// Fake GPUs (tests/support/fake_gpu.hpp) with a 100–300 W limit range. GPU 1
// is the awkward one: no energy counter (pre-Volta), no permission to change
// anything, persistence unsupported.
std::unique_ptr<Gpu> make_gpu(unsigned index) {
    using Call = testing::FakeGpu::Call;
    auto gpu = std::make_unique<testing::FakeGpu>(index);
    gpu->script_identity().name = "NVIDIA Fuzz 100";
    gpu->script_identity().uuid = "GPU-fuzz-" + std::to_string(index);
    gpu->script_identity().pci_bus_id = "00000000:0" + std::to_string(index + 1) + ":00.0";
    gpu->set_constraints(Milliwatts(100'000), Milliwatts(300'000), Milliwatts(300'000));
    gpu->set_supported_clocks({Megahertz(1593), Megahertz(1215)}, {Megahertz(1980), Megahertz(1410), Megahertz(210)});
    if (index != 1) return gpu;
    gpu->script_identity().architecture = GpuArchitecture::Pascal;
    gpu->script_capabilities().energy_counter = Capability::no("pre-Volta");
    const Error unsupported{ErrorCode::NotSupported, "energy counter not supported", "needs Volta or newer", 0};
    gpu->fail(Call::TotalEnergy, unsupported);
    gpu->fail(Call::EnergySnapshot, unsupported);
    gpu->fail(Call::PersistenceMode, Error{ErrorCode::NotSupported, "persistence mode not supported", "", 0});
    const Error no_permission{ErrorCode::NoPermission, "insufficient permissions", "run as root", 0};
    for (const Call call : {Call::SetPowerLimit, Call::ResetPowerLimit, Call::CheckPowerLimitControl,
                            Call::SetGpuLockedClocks, Call::ResetGpuLockedClocks, Call::SetMemoryLockedClocks,
                            Call::ResetMemoryLockedClocks, Call::SetPersistenceMode}) {
        gpu->fail(call, no_permission);
    }
    return gpu;
}

// A RAPL package; CPU 0 has a DRAM zone, CPU 1 has none.
class FakeCpu final : public Cpu {
  public:
    explicit FakeCpu(unsigned index) {
        identity_.index = index;
        identity_.zone_index = index;
        identity_.zone_name = "package-" + std::to_string(index);
        identity_.path = "/fake/intel-rapl:" + std::to_string(index);
        if (index == 0) identity_.dram_path = identity_.path + "/intel-rapl:" + std::to_string(index) + ":0";
    }

    [[nodiscard]] const CpuIdentity& identity() const override { return identity_; }
    [[nodiscard]] Status status() const override { return {}; }
    [[nodiscard]] bool has_dram() const override { return identity_.dram_path.has_value(); }
    [[nodiscard]] Status dram_status() const override {
        if (!has_dram()) return Error{ErrorCode::NotSupported, "no DRAM zone", ""};
        return {};
    }
    [[nodiscard]] Result<CpuEnergy> total_energy() const override {
        CpuEnergy energy;
        energy.package = package_energy().value();
        if (has_dram()) {
            energy.dram = dram_energy().value();
            energy.dram_stats = CounterStats{};
        }
        return energy;
    }
    [[nodiscard]] Result<Joules> package_energy() const override {
        const std::lock_guard lock(mutex_);
        package_j_ += 0.5;
        return Joules(package_j_);
    }
    [[nodiscard]] Result<Joules> dram_energy() const override {
        if (!has_dram()) return Error{ErrorCode::NotSupported, "no DRAM zone", ""};
        const std::lock_guard lock(mutex_);
        dram_j_ += 0.25;
        return Joules(dram_j_);
    }
    [[nodiscard]] Result<CpuEnergy> accumulated() const override { return total_energy(); }

  private:
    CpuIdentity identity_;
    mutable std::mutex mutex_;
    mutable double package_j_ = 1000.0;
    mutable double dram_j_ = 100.0;
};

Gpus make_gpus() {
    std::vector<std::unique_ptr<Gpu>> gpus;
    for (unsigned i = 0; i < kGpuCount; ++i) gpus.push_back(make_gpu(i));
    GpuBackendInfo info;
    info.backend = "nvml";
    info.simulated = true;
    info.physical_gpu_count = kGpuCount;
    return Gpus(std::move(gpus), Status{}, {}, info);
}

Cpus make_cpus() {
    std::vector<std::unique_ptr<Cpu>> cpus;
    for (unsigned i = 0; i < kCpuCount; ++i) cpus.push_back(std::make_unique<FakeCpu>(i));
    return Cpus(std::move(cpus), Status{}, {}, "/fake", nullptr);
}

// One daemon configuration: fleets and router as Daemon::start builds them,
// with an io_context standing in for both the request threads and the
// control pool.
struct Setup {
    asio::io_context io;
    std::unique_ptr<GpuFleet> gpus;
    std::unique_ptr<CpuFleet> cpus;
    std::unique_ptr<Router> router;
    std::size_t control_requests = 0;

    explicit Setup(std::uint8_t mode) {
        RouterOptions options;
        const unsigned group_bits = (mode >> 1) & 7U;
        if (group_bits == 0 || (group_bits & 1U) != 0) options.enabled.insert(ApiGroup::GpuControl);
        if (group_bits == 0 || (group_bits & 2U) != 0) options.enabled.insert(ApiGroup::GpuRead);
        if (group_bits == 0 || (group_bits & 4U) != 0) options.enabled.insert(ApiGroup::CpuRead);
        if ((mode & 1U) != 0) options.signing_key = std::string(kSigningKey);
        if ((mode & 0x10U) != 0) options.control_users = {1000};
        // Short, so that /cpu/get_power costs no real time.
        options.cpu_power_window = std::chrono::microseconds(1);
        if (options.enabled.contains(ApiGroup::GpuControl) || options.enabled.contains(ApiGroup::GpuRead)) {
            gpus = std::make_unique<GpuFleet>(make_gpus(), io.get_executor());
        }
        if (options.enabled.contains(ApiGroup::CpuRead)) cpus = std::make_unique<CpuFleet>(make_cpus());
        router = std::make_unique<Router>(std::move(options), gpus.get(), cpus.get(), io.get_executor(),
                                          [this](const Peer& peer) {
                                              ++control_requests;
                                              return peer.pid.value_or(0);
                                          });
    }

    // Runs whatever the last request queued until nothing is left.
    void drain() {
        io.restart();
        io.run();
    }
};

// Built once per configuration and reused; drained after every request.
Setup& setup_for(std::uint8_t mode) {
    static std::unique_ptr<Setup> setups[128];
    auto& setup = setups[mode & 0x7FU];
    if (!setup) setup = std::make_unique<Setup>(mode & 0x7FU);
    return *setup;
}

Peer peer_for(std::uint8_t mode, std::uint64_t connection) {
    Peer peer;
    peer.connection_id = connection;
    if ((mode & 0x40U) != 0) {
        peer.address = "127.0.0.1:51234";
    } else {
        peer.address = "unix";
        peer.pid = 4242;
        peer.uid = (mode & 0x20U) != 0 ? 1000 : 0;
        peer.gid = peer.uid;
    }
    return peer;
}

bool is_stream_path(std::string_view target) {
    const auto path = target.substr(0, target.find('?'));
    return path == "/gpu/stream_power" || path == "/cpu/stream_power";
}

void check_response(const Request& request, const Response& response, const Setup& setup) {
    const auto code = static_cast<unsigned>(response.status);
    if (code < 200 || code > 599) fail("status " + std::to_string(code));
    if (response.stream) {
        if (response.status != http::status::ok) fail("event stream with status " + std::to_string(code));
        if (!is_stream_path(request.target())) fail("event stream for " + std::string(request.target()));
        const auto* source = dynamic_cast<const PowerStreamSource*>(response.stream.get());
        if (source == nullptr) fail("event stream that is not a power stream");
        const std::size_t count = source->kind() == StreamKind::GpuPower ? (setup.gpus ? setup.gpus->size() : 0)
                                                                         : (setup.cpus ? setup.cpus->size() : 0);
        for (const auto id : source->ids()) {
            if (id >= count) fail("event stream over unknown device " + std::to_string(id));
        }
        return;
    }
    if (response.content_type == "application/json") {
        if (!nlohmann::json::accept(response.body)) fail("invalid JSON body: " + response.body);
    }
    const bool www_authenticate =
        std::any_of(response.headers.begin(), response.headers.end(),
                    [](const auto& header) { return header.first == kWwwAuthenticateHeader; });
    if (response.status == http::status::unauthorized && !www_authenticate) {
        fail("401 without WWW-Authenticate");
    }
}

// Serializes the answer as Session::send does.
void serialize(const Response& response, unsigned version, bool keep_alive) {
    http::response<http::string_body> message(response.status, version != 0 ? version : 11);
    message.set(http::field::server, "zeusd");
    if (!response.content_type.empty()) message.set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message.insert(name, value);
    message.body() = response.body;
    message.keep_alive(keep_alive);
    message.prepare_payload();
    std::ostringstream out;
    out << message;
}

// Feeds `data` to a fresh parser as http::async_read does, with the client
// sending nothing after `data`: where the parser needs more, the connection
// ends (Beast's read then calls put_eof, or reports end_of_stream when
// nothing came). Returns how many bytes the parser took; on return either
// `error` is set or the parser is done.
std::size_t parse_one(http::request_parser<http::string_body>& parser, std::string_view data,
                      beast::error_code& error) {
    const http_server::ServerLimits limits;
    parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
    parser.body_limit(limits.body_limit);
    parser.eager(true);
    std::size_t used = 0;
    const auto end_of_input = [&] {
        if (!parser.got_some()) {
            error = http::error::end_of_stream;
            return;
        }
        parser.put_eof(error);
        if (!error && !parser.is_done()) error = http::error::partial_message;
    };
    while (!parser.is_done()) {
        if (used == data.size()) {
            end_of_input();
            break;
        }
        const auto taken = parser.put(asio::buffer(data.data() + used, data.size() - used), error);
        if (taken > data.size() - used) fail("parser consumed more than it was given");
        used += taken;
        if (error == http::error::need_more) {
            // What is left is not enough, and no more comes.
            error = {};
            end_of_input();
            break;
        }
        if (error) break;
        if (taken == 0 && !parser.is_done()) {
            end_of_input();  // no progress; cannot happen with eager parsing
            break;
        }
    }
    return used;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
    log::set_level(log::Level::Error);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t mode = data[0];
    Setup& setup = setup_for(mode);
    static std::uint64_t connection = 0;
    const Peer peer = peer_for(mode, ++connection);

    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    for (int i = 0; i < kMaxRequestsPerInput && !rest.empty(); ++i) {
        http::request_parser<http::string_body> parser;
        beast::error_code error;
        rest.remove_prefix(parse_one(parser, rest, error));
        if (error == http::error::end_of_stream) break;  // the client hung up between requests
        if (error) {
            // Session answers the malformed request and closes.
            Response response = Response::text(http::status::bad_request, "Bad Request: " + error.message());
            serialize(response, 11, false);
            break;
        }
        if (!parser.is_done()) break;
        const Request request = parser.release();
        const bool keep_alive = request.keep_alive();

        int responses = 0;
        std::optional<Response> answer;
        setup.router->handle(request, peer, [&](Response response) {
            ++responses;
            answer = std::move(response);
        });
        setup.drain();
        if (responses != 1) fail(std::to_string(responses) + " responses to " + std::string(request.target()));
        check_response(request, *answer, setup);
        if (answer->stream) break;  // the connection is an event stream from now on
        serialize(*answer, request.version(), keep_alive);
        if (!keep_alive) break;
    }
    // Changes that clients made are put back between inputs, as when a
    // client goes away, so the fake GPUs start every input the same way.
    if (setup.gpus) {
        setup.gpus->restore_client(4242);
        setup.gpus->restore_client(0);
        setup.drain();
    }
    return 0;
}
