// ZeusdPowerStream against fake daemons whose event streams the test scripts
// (FakeZeusd::publish): readings of one and of several daemons, over a Unix
// socket and TCP, keyed and clock-corrected as documented; a daemon that goes
// away mid-stream and comes back; one that is not there at start; malformed
// events and refused streams; and stop() or destruction while streams block.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "device/zeusd/fake_zeusd.hpp"
#include "zeus/device/zeusd_power_stream.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::FakeZeusd;

constexpr auto kGpuStream = "/gpu/stream_power";
constexpr auto kCpuStream = "/cpu/stream_power";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return condition();
}

std::string gpu_event(unsigned id, long power_mw, long timestamp_ms) {
    return json{{"timestamp_ms", timestamp_ms}, {"gpu_id", id}, {"power_mw", power_mw}}.dump();
}

std::string cpu_event(unsigned id, long cpu_mw, std::optional<long> dram_mw, long timestamp_ms) {
    return json{{"timestamp_ms", timestamp_ms},
                {"cpu_id", id},
                {"cpu_mw", cpu_mw},
                {"dram_mw", dram_mw ? json(*dram_mw) : json(nullptr)}}
        .dump();
}

ZeusdStreamSource source(const FakeZeusd& daemon, std::string key,
                         std::optional<std::vector<unsigned>> gpu_ids = std::nullopt,
                         std::optional<std::vector<unsigned>> cpu_ids = std::nullopt) {
    return ZeusdStreamSource{daemon.client_config(), std::move(key), std::move(gpu_ids), std::move(cpu_ids)};
}

std::unique_ptr<ZeusdPowerStream> start_ok(std::vector<ZeusdStreamSource> sources,
                                           std::chrono::milliseconds reconnect_delay = 50ms) {
    auto started = ZeusdPowerStream::start(std::move(sources), reconnect_delay);
    EXPECT_TRUE(started) << started.error().describe();
    if (!started) return nullptr;
    return std::move(started).value();
}

// Waits until `count` clients stream `path` from `daemon`.
bool streaming(const FakeZeusd& daemon, const char* path, std::size_t count = 1) {
    return eventually([&] { return daemon.subscribers(path) == count; });
}

// Streams every GPU and CPU of `daemon` as "node0"; returns once both streams are open.
std::unique_ptr<ZeusdPowerStream> stream_everything(const FakeZeusd& daemon) {
    auto stream = start_ok({source(daemon, "node0")});
    const bool open = stream && streaming(daemon, kGpuStream) && streaming(daemon, kCpuStream);
    EXPECT_TRUE(open) << "the GPU and CPU streams did not open";
    return open ? std::move(stream) : nullptr;
}

// Waits until `stream` has a reading for which `holds` is true.
template <class Holds>
bool reading(const ZeusdPowerStream& stream, const std::string& key, Holds holds) {
    return eventually([&] {
        const auto latest = stream.latest();
        const auto it = latest.find(key);
        return it != latest.end() && holds(it->second);
    });
}

std::string all_warnings(ZeusdPowerStream& stream) {
    std::string out;
    for (const auto& w : stream.take_warnings()) out += w + "\n";
    return out;
}

// Waits for a warning containing `part`; returns every warning seen.
std::string warned(ZeusdPowerStream& stream, const std::string& part) {
    std::string seen;
    eventually([&] {
        seen += all_warnings(stream);
        return contains(seen, part);
    });
    return seen;
}

std::size_t thread_count() {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator("/proc/self/task"), std::filesystem::directory_iterator()));
}

TEST(ZeusdPowerStream, StreamsGpuAndCpuPowerOfOneDaemon) {
    FakeZeusd daemon;
    auto stream = start_ok({source(daemon, "node0")});
    ASSERT_TRUE(stream);
    EXPECT_EQ(stream->stream_count(), 2U);  // GPU and CPU: every group enabled
    ASSERT_TRUE(streaming(daemon, kGpuStream));
    ASSERT_TRUE(streaming(daemon, kCpuStream));
    // Every device, no query; and as an event-stream reader.
    const auto gpu_requests = daemon.requests(kGpuStream);
    ASSERT_EQ(gpu_requests.size(), 1U);
    EXPECT_EQ(gpu_requests[0].query, "");
    EXPECT_EQ(gpu_requests[0].headers.at("accept"), "text/event-stream");
    ASSERT_EQ(daemon.requests(kCpuStream).size(), 1U);
    EXPECT_EQ(daemon.requests(kCpuStream)[0].query, "");

    const long t0 = 1'700'000'000'000;
    daemon.publish(kGpuStream, gpu_event(0, 75'000, t0));
    daemon.publish(kGpuStream, gpu_event(1, 212'500, t0 + 100));
    daemon.publish(kCpuStream, cpu_event(0, 85'000, 12'000, t0 + 50));
    daemon.publish(kCpuStream, cpu_event(1, 40'000, std::nullopt, t0 + 60));
    ASSERT_TRUE(reading(*stream, "node0", [](const StreamedPower& p) {
        return p.gpu_w.size() == 2 && p.cpu_w.size() == 2;
    })) << all_warnings(*stream);

    const auto power = stream->latest().at("node0");
    EXPECT_DOUBLE_EQ(power.gpu_w.at(0), 75.0);
    EXPECT_DOUBLE_EQ(power.gpu_w.at(1), 212.5);
    EXPECT_DOUBLE_EQ(power.cpu_w.at(0).cpu_w, 85.0);
    ASSERT_TRUE(power.cpu_w.at(0).dram_w);
    EXPECT_DOUBLE_EQ(*power.cpu_w.at(0).dram_w, 12.0);
    EXPECT_DOUBLE_EQ(power.cpu_w.at(1).cpu_w, 40.0);
    EXPECT_FALSE(power.cpu_w.at(1).dram_w);
    // The latest of the daemon's timestamps, moved onto this machine's clock.
    const double offset = stream->clock_offsets_s().at("node0");
    EXPECT_DOUBLE_EQ(power.timestamp_s, static_cast<double>(t0 + 100) / 1000.0 + offset);
    // The fake answers GET /time with this machine's clock: the offset is the round trip's error.
    EXPECT_LT(std::abs(offset), 1.0);
    // A reading older than the latest does not move the timestamp back; its power still counts.
    daemon.publish(kGpuStream, gpu_event(0, 80'000, t0 - 5000));
    ASSERT_TRUE(reading(*stream, "node0", [](const StreamedPower& p) { return p.gpu_w.at(0) == 80.0; }));
    EXPECT_DOUBLE_EQ(stream->latest().at("node0").timestamp_s, static_cast<double>(t0 + 100) / 1000.0 + offset);
    EXPECT_EQ(all_warnings(*stream), "");
}

TEST(ZeusdPowerStream, ListedIdsGoIntoTheQueryAndAnEmptyListStreamsNothing) {
    FakeZeusd daemon;
    auto stream = start_ok({source(daemon, "node0", std::vector<unsigned>{1}, std::vector<unsigned>{})});
    ASSERT_TRUE(stream);
    EXPECT_EQ(stream->stream_count(), 1U);
    ASSERT_TRUE(streaming(daemon, kGpuStream));
    ASSERT_EQ(daemon.requests(kGpuStream).size(), 1U);
    EXPECT_EQ(daemon.requests(kGpuStream)[0].query, "gpu_ids=1");
    EXPECT_TRUE(daemon.requests(kCpuStream).empty());
}

TEST(ZeusdPowerStream, StreamsSeveralDaemonsOverUnixSocketAndTcpAtOnce) {
    FakeZeusd local;
    FakeZeusd remote(FakeZeusd::default_config(), FakeZeusd::Listen::Tcp);
    auto cpu_only = FakeZeusd::default_config();
    cpu_only["enabled_api_groups"] = {"cpu-read"};
    FakeZeusd third(cpu_only);
    const std::string remote_key = "127.0.0.1:" + std::to_string(remote.client_config().port);
    auto stream =
        start_ok({source(local, local.socket_path().string()), source(remote, remote_key), source(third, "third")});
    ASSERT_TRUE(stream);
    EXPECT_EQ(stream->stream_count(), 5U);  // two, two, and the third's CPU stream only
    ASSERT_TRUE(streaming(local, kGpuStream) && streaming(remote, kGpuStream) && streaming(third, kCpuStream));
    ASSERT_TRUE(streaming(local, kCpuStream) && streaming(remote, kCpuStream));
    EXPECT_TRUE(third.requests(kGpuStream).empty());

    local.publish(kGpuStream, gpu_event(0, 100'000, 1000));
    remote.publish(kGpuStream, gpu_event(0, 200'000, 2000));
    remote.publish(kCpuStream, cpu_event(1, 30'000, std::nullopt, 2000));
    third.publish(kCpuStream, cpu_event(0, 60'000, 7'000, 3000));
    const auto key_local = local.socket_path().string();
    ASSERT_TRUE(reading(*stream, key_local, [](const StreamedPower& p) { return p.gpu_w.count(0) == 1; }));
    ASSERT_TRUE(
        reading(*stream, remote_key, [](const StreamedPower& p) { return p.gpu_w.size() + p.cpu_w.size() == 2; }));
    ASSERT_TRUE(reading(*stream, "third", [](const StreamedPower& p) { return p.cpu_w.count(0) == 1; }));

    const auto latest = stream->latest();
    ASSERT_EQ(latest.size(), 3U);
    EXPECT_DOUBLE_EQ(latest.at(key_local).gpu_w.at(0), 100.0);
    EXPECT_TRUE(latest.at(key_local).cpu_w.empty());
    EXPECT_DOUBLE_EQ(latest.at(remote_key).gpu_w.at(0), 200.0);
    EXPECT_DOUBLE_EQ(latest.at(remote_key).cpu_w.at(1).cpu_w, 30.0);
    EXPECT_DOUBLE_EQ(*latest.at("third").cpu_w.at(0).dram_w, 7.0);
    EXPECT_DOUBLE_EQ(latest.at("third").timestamp_s, 3.0 + stream->clock_offsets_s().at("third"));
    EXPECT_EQ(stream->clock_offsets_s().size(), 3U);
}

TEST(ZeusdPowerStream, ReconnectsToADaemonThatComesBackAndKeepsItsReadings) {
    for (const auto listen : {FakeZeusd::Listen::UnixSocket, FakeZeusd::Listen::Tcp}) {
        SCOPED_TRACE(listen == FakeZeusd::Listen::Tcp ? "tcp" : "unix");
        FakeZeusd daemon(FakeZeusd::default_config(), listen);
        auto stream = start_ok({source(daemon, "node0", std::nullopt, std::vector<unsigned>{})}, 100ms);
        ASSERT_TRUE(stream);
        ASSERT_TRUE(streaming(daemon, kGpuStream));
        daemon.publish(kGpuStream, gpu_event(0, 50'000, 1000));
        ASSERT_TRUE(reading(*stream, "node0", [](const StreamedPower& p) { return p.gpu_w.count(0) == 1; }));

        daemon.stop();
        const auto lost = warned(*stream, "GPU SSE");
        EXPECT_TRUE(contains(lost, "node0")) << lost;
        EXPECT_TRUE(contains(lost, "reconnecting in 0.1 s")) << lost;
        // Readings stay while the daemon is away.
        EXPECT_DOUBLE_EQ(stream->latest().at("node0").gpu_w.at(0), 50.0);

        daemon.restart();
        ASSERT_TRUE(streaming(daemon, kGpuStream)) << all_warnings(*stream);
        daemon.publish(kGpuStream, gpu_event(0, 66'000, 2000));
        ASSERT_TRUE(reading(*stream, "node0", [](const StreamedPower& p) { return p.gpu_w.at(0) == 66.0; }));
        EXPECT_DOUBLE_EQ(stream->latest().at("node0").timestamp_s, 2.0 + stream->clock_offsets_s().at("node0"));
        stream->stop();
        EXPECT_TRUE(streaming(daemon, kGpuStream, 0)) << "stop() hung up";
    }
}

TEST(ZeusdPowerStream, ADaemonThatIsNotThereAtStartIsAnError) {
    FakeZeusd there;
    FakeZeusd gone;
    const auto gone_source = source(gone, "gone");
    gone.stop();
    const auto threads_before = thread_count();
    auto started = ZeusdPowerStream::start({source(there, "there"), gone_source}, 50ms);
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().code, ErrorCode::Unavailable);
    EXPECT_TRUE(contains(started.error().message, gone.socket_path().string())) << started.error().describe();
    // Nothing was started for the daemon that answered.
    EXPECT_EQ(thread_count(), threads_before);
    EXPECT_EQ(there.subscribers(kGpuStream), 0U);
}

TEST(ZeusdPowerStream, DuplicateKeysAreRefused) {
    FakeZeusd daemon;
    auto started = ZeusdPowerStream::start({source(daemon, "same"), source(daemon, "same")}, 50ms);
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().code, ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(started.error().message, "Duplicate server endpoints: ['same']"));
}

TEST(ZeusdPowerStream, MalformedEventsAreWarnedAboutAndTheStreamGoesOn) {
    FakeZeusd daemon;
    auto stream = start_ok({source(daemon, "node0", std::nullopt, std::vector<unsigned>{})});
    ASSERT_TRUE(stream);
    ASSERT_TRUE(streaming(daemon, kGpuStream));
    const std::vector<std::string> malformed = {
        "not json",
        "[1, 2]",
        R"({"gpu_id": 0, "timestamp_ms": 1})",                       // no power
        R"({"gpu_id": "0", "power_mw": 1000, "timestamp_ms": 1})",   // id not a number
        R"({"gpu_id": -1, "power_mw": 1000, "timestamp_ms": 1})",    // negative id
        R"({"gpu_id": 0.5, "power_mw": 1000, "timestamp_ms": 1})",   // not an index
        R"({"gpu_id": 1e20, "power_mw": 1000, "timestamp_ms": 1})",  // past any index
        R"({"cpu_id": 0, "cpu_mw": 1000, "timestamp_ms": 1})",       // a CPU event on the GPU stream
    };
    for (const auto& event : malformed) daemon.publish(kGpuStream, event);
    daemon.publish(kGpuStream, gpu_event(1, 90'000, 5000));
    ASSERT_TRUE(reading(*stream, "node0", [](const StreamedPower& p) { return p.gpu_w.count(1) == 1; }));
    EXPECT_EQ(stream->latest().at("node0").gpu_w.size(), 1U) << "a malformed event made a reading";
    EXPECT_DOUBLE_EQ(stream->latest().at("node0").gpu_w.at(1), 90.0);
    const auto warnings = stream->take_warnings();
    ASSERT_EQ(warnings.size(), malformed.size());
    for (std::size_t i = 0; i < malformed.size(); ++i) {
        EXPECT_EQ(warnings[i], "Malformed GPU SSE event from node0: " + malformed[i]);
    }
}

TEST(ZeusdPowerStream, WarningsNobodyTakesAreBounded) {
    FakeZeusd daemon;
    auto stream = start_ok({source(daemon, "node0", std::nullopt, std::vector<unsigned>{})});
    ASSERT_TRUE(stream);
    ASSERT_TRUE(streaming(daemon, kGpuStream));
    const std::size_t extra = 200;
    const std::size_t sent = ZeusdPowerStream::kMaxWarnings + extra;
    for (std::size_t i = 0; i < sent; ++i) daemon.publish(kGpuStream, "bad " + std::to_string(i));
    daemon.publish(kGpuStream, gpu_event(0, 1000, 1));
    ASSERT_TRUE(reading(*stream, "node0", [](const StreamedPower& p) { return p.gpu_w.count(0) == 1; }));
    const auto warnings = stream->take_warnings();
    ASSERT_EQ(warnings.size(), ZeusdPowerStream::kMaxWarnings + 1);
    EXPECT_EQ(warnings.front(), std::to_string(extra) + " earlier warnings were dropped (nobody took them)");
    EXPECT_EQ(warnings[1], "Malformed GPU SSE event from node0: bad " + std::to_string(extra));
    EXPECT_EQ(warnings.back(), "Malformed GPU SSE event from node0: bad " + std::to_string(sent - 1));
    EXPECT_TRUE(stream->take_warnings().empty());
}

TEST(ZeusdPowerStream, AnEventPastTheBoundIsCutOffAndTheStreamReconnects) {
    FakeZeusd daemon;
    auto stream = start_ok({source(daemon, "node0", std::nullopt, std::vector<unsigned>{})}, 100ms);
    ASSERT_TRUE(stream);
    ASSERT_TRUE(streaming(daemon, kGpuStream));
    daemon.publish(kGpuStream, std::string(ZeusdPowerStream::kMaxEventBytes + 1, 'x'));
    const auto cut = warned(*stream, "reconnecting");
    EXPECT_TRUE(contains(cut, "GPU SSE event from node0 is over " +
                                  std::to_string(ZeusdPowerStream::kMaxEventBytes >> 10U) +
                                  " KiB without an end; reconnecting in 0.1 s"))
        << cut;
    ASSERT_TRUE(
        eventually([&] { return daemon.requests(kGpuStream).size() == 2 && daemon.subscribers(kGpuStream) == 1; }));
    daemon.publish(kGpuStream, gpu_event(0, 3000, 1));
    ASSERT_TRUE(reading(*stream, "node0", [](const StreamedPower& p) { return p.gpu_w.count(0) == 1; }));
    EXPECT_DOUBLE_EQ(stream->latest().at("node0").gpu_w.at(0), 3.0);
}

TEST(ZeusdPowerStream, ARefusedStreamIsRetriedButAnAuthFailureIsNot) {
    auto config = FakeZeusd::default_config();
    config["responses"] = {{"GET /gpu/stream_power", {{"status", 500}, {"body", R"({"error":"NVML broke"})"}}},
                           {"GET /cpu/stream_power", {{"status", 403}, {"body", R"({"error":"no"})"}}}};
    FakeZeusd daemon(config);
    auto stream = start_ok({source(daemon, "node0")}, 100ms);
    ASSERT_TRUE(stream);
    // The GPU stream is asked again after each refusal; the CPU stream once only.
    ASSERT_TRUE(eventually([&] { return daemon.requests(kGpuStream).size() >= 3; }));
    const auto warnings = warned(*stream, "CPU SSE");
    EXPECT_TRUE(contains(
        warnings, R"(GPU SSE connection to node0 rejected (HTTP 500: {"error":"NVML broke"}); reconnecting in 0.1 s)"))
        << warnings;
    EXPECT_TRUE(contains(
        warnings, R"(CPU SSE connection to node0 failed with HTTP 403: {"error":"no"}; not retried (check the token))"))
        << warnings;
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(daemon.requests(kCpuStream).size(), 1U);
}

TEST(ZeusdPowerStream, StopWhileStreamsWaitForEventsJoinsPromptly) {
    FakeZeusd daemon;
    FakeZeusd tcp(FakeZeusd::default_config(), FakeZeusd::Listen::Tcp);
    const auto threads_before = thread_count();
    auto stream = start_ok({source(daemon, "a"), source(tcp, "b")});
    ASSERT_TRUE(stream);
    ASSERT_TRUE(streaming(daemon, kGpuStream) && streaming(daemon, kCpuStream));
    ASSERT_TRUE(streaming(tcp, kGpuStream) && streaming(tcp, kCpuStream));
    EXPECT_EQ(thread_count(), threads_before + 4);
    const auto begin = std::chrono::steady_clock::now();
    stream->stop();
    // keep_going is asked at least once a second while no data comes.
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 1500ms);
    EXPECT_TRUE(stream->stopped());
    EXPECT_EQ(thread_count(), threads_before);
    EXPECT_TRUE(streaming(daemon, kGpuStream, 0) && streaming(tcp, kCpuStream, 0));
    stream->stop();  // again: nothing to do
    // A waiter returns at once once stopped.
    const auto wait_begin = std::chrono::steady_clock::now();
    (void)stream->wait_for_update(stream->wait_for_update(0, 0ms), 10s);
    EXPECT_LT(std::chrono::steady_clock::now() - wait_begin, 1s);
}

TEST(ZeusdPowerStream, StopFromSeveralThreadsAtOnceJoinsEachStreamOnce) {
    // Python's stop() releases the GIL: an iterator's thread and the main one may both stop it.
    FakeZeusd daemon;
    const auto threads_before = thread_count();
    auto stream = stream_everything(daemon);
    ASSERT_TRUE(stream);
    std::vector<std::thread> stoppers;
    for (int i = 0; i < 4; ++i) stoppers.emplace_back([&] { stream->stop(); });
    for (auto& t : stoppers) t.join();
    EXPECT_TRUE(stream->stopped());
    EXPECT_EQ(thread_count(), threads_before);
}

TEST(ZeusdPowerStream, StopDuringTheReconnectDelayDoesNotWaitItOut) {
    FakeZeusd daemon;
    auto stream = start_ok({source(daemon, "node0", std::nullopt, std::vector<unsigned>{})}, 60s);
    ASSERT_TRUE(stream);
    ASSERT_TRUE(streaming(daemon, kGpuStream));
    daemon.stop();
    const auto lost = warned(*stream, "reconnecting in 60.0 s");
    ASSERT_TRUE(contains(lost, "reconnecting in 60.0 s")) << lost;
    const auto begin = std::chrono::steady_clock::now();
    stream->stop();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);
}

TEST(ZeusdPowerStream, DestructionWithoutStopEndsEveryStream) {
    FakeZeusd daemon;
    const auto threads_before = thread_count();
    {
        auto stream = stream_everything(daemon);
        ASSERT_TRUE(stream);
        daemon.publish(kGpuStream, gpu_event(0, 1000, 1));
    }
    EXPECT_EQ(thread_count(), threads_before);
    EXPECT_TRUE(streaming(daemon, kGpuStream, 0) && streaming(daemon, kCpuStream, 0));
}

TEST(ZeusdPowerStream, WaitForUpdateCountsReadings) {
    FakeZeusd daemon;
    auto stream = start_ok({source(daemon, "node0", std::nullopt, std::vector<unsigned>{})});
    ASSERT_TRUE(stream);
    ASSERT_TRUE(streaming(daemon, kGpuStream));
    EXPECT_EQ(stream->wait_for_update(0, 50ms), 0U);  // nothing yet: the timeout ends the wait
    daemon.publish(kGpuStream, gpu_event(0, 1000, 1));
    daemon.publish(kGpuStream, gpu_event(1, 2000, 2));
    EXPECT_TRUE(eventually([&] { return stream->wait_for_update(1, 1s) == 2; }));
}

}  // namespace
}  // namespace zeus
