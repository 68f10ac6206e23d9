// Server-Sent Events: the exact `data: <json>\n\n` framing, only requested
// devices, changed values only, CPU power from the counter over the nominal
// period, and pollers that run only while someone listens.
#include <poll.h>
#include <sys/socket.h>

#include <fstream>

#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using nlohmann::json;

// Reads one SSE response from a raw connection.
class StreamClient {
  public:
    StreamClient(const Endpoint& endpoint, const std::string& target) : fd_(connect_to(endpoint)) {
        if (fd_ < 0) throw std::runtime_error("cannot connect");
        const std::string request = "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
        if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) < 0) throw std::runtime_error("send failed");
    }
    ~StreamClient() { close(); }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    // Reads until `count` events arrived or `timeout` passed.
    void read_events(std::size_t count, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (events().size() < count && std::chrono::steady_clock::now() < deadline) {
            pollfd descriptor{fd_, POLLIN, 0};
            if (::poll(&descriptor, 1, 20) <= 0) continue;
            char buffer[4096];
            const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
            if (n <= 0) break;
            raw_.append(buffer, static_cast<std::size_t>(n));
        }
    }

    [[nodiscard]] std::string head() const { return raw_.substr(0, raw_.find("\r\n\r\n")); }

    // The body with the chunked transfer coding removed.
    [[nodiscard]] std::string body() const {
        std::string out;
        auto at = raw_.find("\r\n\r\n");
        if (at == std::string::npos) return out;
        at += 4;
        while (at < raw_.size()) {
            const auto line_end = raw_.find("\r\n", at);
            if (line_end == std::string::npos) break;
            const auto size = std::stoul(raw_.substr(at, line_end - at), nullptr, 16);
            if (size == 0 || line_end + 2 + size > raw_.size()) break;
            out += raw_.substr(line_end + 2, size);
            at = line_end + 2 + size + 2;
        }
        return out;
    }

    [[nodiscard]] std::vector<std::string> events() const {
        std::vector<std::string> out;
        const auto text = body();
        std::size_t at = 0;
        while (true) {
            const auto end = text.find("\n\n", at);
            if (end == std::string::npos) break;
            out.push_back(text.substr(at, end - at));
            at = end + 2;
        }
        return out;
    }

  private:
    int fd_;
    std::string raw_;
};

TEST_F(ZeusdTest, GpuPowerStreamSendsChangedValuesOfTheRequestedGpusInTheOriginalsFraming) {
    start({"--gpu-power-poll-hz", "50"});
    StreamClient stream(endpoint_, "/gpu/stream_power?gpu_ids=1");
    stream.read_events(5, std::chrono::milliseconds(5000));
    const auto head = stream.head();
    EXPECT_NE(head.find("HTTP/1.1 200 OK"), std::string::npos) << head;
    EXPECT_NE(head.find("Content-Type: text/event-stream"), std::string::npos) << head;
    EXPECT_NE(head.find("Cache-Control: no-cache"), std::string::npos) << head;
    const auto events = stream.events();
    ASSERT_GE(events.size(), 5U) << stream.body();
    std::optional<std::int64_t> previous;
    for (const auto& event : events) {
        ASSERT_EQ(event.rfind("data: ", 0), 0U) << event;
        ASSERT_EQ(event.find('\n'), std::string::npos) << event;  // one line, no event:/id: fields
        const auto value = json::parse(event.substr(6));
        EXPECT_EQ(value.size(), 3U) << value;
        EXPECT_EQ(value["gpu_id"], 1);
        const auto mw = value["power_mw"].get<std::int64_t>();
        EXPECT_GT(mw, 0);
        if (previous) {
            EXPECT_NE(mw, *previous) << "unchanged values are not sent again";
        }
        previous = mw;
        EXPECT_GT(value["timestamp_ms"].get<std::int64_t>(), 0);
    }
}

TEST_F(ZeusdTest, ALostGpuInAStreamIsLoggedOnceNotAtEveryPoll) {
    const auto config = dir_ / "sim.json";
    std::ofstream(config) << R"({"gpus": [{"model": "A100-SXM4-40GB"},
                                          {"model": "A100-SXM4-40GB", "faults": {"init_error": "GPU_IS_LOST"}}]})";
    ::setenv("ZEUS_SIM_CONFIG", config.c_str(), 1);
    start({"--gpu-power-poll-hz", "50"});
    {
        StreamClient stream(endpoint_, "/gpu/stream_power?gpu_ids=0,1");
        stream.read_events(1000, std::chrono::milliseconds(600));  // ~30 polls of the lost GPU
        EXPECT_FALSE(stream.events().empty());                      // GPU 0 still streams
    }
    const auto text = log();
    std::size_t failures = 0;
    for (auto at = text.find("GPU 1 power poll failed"); at != std::string::npos;
         at = text.find("GPU 1 power poll failed", at + 1)) {
        ++failures;
    }
    EXPECT_EQ(failures, 1U) << text;
    EXPECT_EQ(text.find("GPU 0 power poll failed"), std::string::npos) << text;
}

TEST_F(ZeusdTest, StreamsRefuseUnknownDevices) {
    start();
    const auto reply = get("/gpu/stream_power?gpu_ids=1,5,9");
    EXPECT_EQ(reply.status, 400);
    EXPECT_EQ(reply.body, R"({"error":"Unknown GPU indices: [5, 9]. Available: [0, 1]"})");
    const auto cpu = get("/cpu/stream_power?cpu_ids=2");
    EXPECT_EQ(cpu.body, R"({"error":"Unknown CPU indices: [2]. Available: [0]"})");
}

TEST_F(ZeusdTest, CpuPowerStreamIsTheCounterDeltaOverThePollPeriod) {
    start({"--cpu-power-poll-hz", "10"});  // 100 ms nominal period
    StreamClient stream(endpoint_, "/cpu/stream_power");
    stream.read_events(1, std::chrono::milliseconds(3000));  // 0 mW while the counters stand still
    powercap_.set_energy(package_, kPackageStartUj + 50'000);  // 50 mJ in one period: 500 mW
    stream.read_events(3, std::chrono::milliseconds(3000));
    const auto events = stream.events();
    ASSERT_GE(events.size(), 3U) << stream.body();
    bool saw_step = false;
    for (const auto& event : events) {
        const auto value = json::parse(event.substr(6));
        EXPECT_EQ(value["cpu_id"], 0);
        EXPECT_TRUE(value.contains("dram_mw"));
        saw_step = saw_step || value["cpu_mw"] == 500;
    }
    EXPECT_TRUE(saw_step) << stream.body();
    EXPECT_EQ(json::parse(events.front().substr(6))["cpu_mw"], 0);
}

TEST_F(ZeusdTest, PollersRunOnlyWhileSomeoneListens) {
    start({"--gpu-power-poll-hz", "50"});
    ::usleep(200000);
    EXPECT_EQ(log().find("poller started"), std::string::npos) << log();
    {
        StreamClient first(endpoint_, "/gpu/stream_power?gpu_ids=0");
        StreamClient second(endpoint_, "/gpu/stream_power?gpu_ids=0");
        first.read_events(2, std::chrono::milliseconds(3000));
        second.read_events(2, std::chrono::milliseconds(3000));
        EXPECT_GE(first.events().size(), 2U);
        EXPECT_GE(second.events().size(), 2U);
        EXPECT_NE(log().find("GPU 0 poller started"), std::string::npos);
        EXPECT_EQ(log().find("GPU 1 poller started"), std::string::npos) << "nobody listens to GPU 1";
    }
    EXPECT_TRUE(eventually([&] { return log().find("GPU 0 poller paused") != std::string::npos; })) << log();
}

}  // namespace
}  // namespace zeus::testing
