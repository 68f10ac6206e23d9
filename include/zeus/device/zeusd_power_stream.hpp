// Power of a whole fleet in one process: the latest GPU and CPU power of many
// zeusd instances, streamed over their server-sent events (GET
// /gpu/stream_power, /cpu/stream_power), one thread per stream, reconnecting
// after a drop, with each daemon's timestamps moved onto this machine's clock
// (the offset measured through GET /time). The original's
// zeus.monitor.power_streaming.PowerStreamingClient, natively.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/platform/error.hpp"

namespace zeus {

struct ZeusdStreamSource {
    ZeusdConfig config;
    // How readings are keyed: the original's endpoint ("host:port" or the socket path).
    std::string key;
    // nullopt: every device the daemon has and the token may read (none: skipped);
    // empty: none; listed: exactly these (an error when one is missing or the scope is not granted).
    std::optional<std::vector<unsigned>> gpu_ids;
    std::optional<std::vector<unsigned>> cpu_ids;
};

struct StreamedCpuPower {
    double cpu_w = 0.0;
    std::optional<double> dram_w;
};

struct StreamedPower {
    double timestamp_s = 0.0;  // Unix seconds on this machine's clock: the latest reading's
    std::map<unsigned, double> gpu_w;
    std::map<unsigned, StreamedCpuPower> cpu_w;
};

class ZeusdPowerStream {
  public:
    // Warnings kept for take_warnings(): the latest, so that a caller that
    // never takes them does not hold a dropped daemon's every retry.
    static constexpr std::size_t kMaxWarnings = 100;
    // An event (up to its blank line) longer than this ends the connection
    // (with a warning, and a reconnect): zeusd's are under 100 bytes.
    static constexpr std::size_t kMaxEventBytes = 64U << 10U;

    // Connects to every source (discovery, the token's scopes, the clock
    // offset: median of 5 GET /time round trips) and starts the streams.
    // Errors: a daemon that cannot be reached (Unavailable), a listed index it
    // lacks (InvalidArgument), a listed device type the token may not read
    // (NoPermission), the same key twice (InvalidArgument).
    [[nodiscard]] static Result<std::unique_ptr<ZeusdPowerStream>> start(std::vector<ZeusdStreamSource> sources,
                                                                         std::chrono::milliseconds reconnect_delay);
    ZeusdPowerStream(const ZeusdPowerStream&) = delete;
    ZeusdPowerStream& operator=(const ZeusdPowerStream&) = delete;
    ~ZeusdPowerStream();

    // The latest readings per source key (a source appears once it sent one).
    [[nodiscard]] std::map<std::string, StreamedPower> latest() const;
    // Seconds to add to each daemon's clock to get this machine's.
    [[nodiscard]] const std::map<std::string, double>& clock_offsets_s() const { return offsets_; }
    [[nodiscard]] std::size_t stream_count() const { return threads_.size(); }
    // Counts readings received; waits until it passes `seen` or `timeout` ends
    // or stop() is called, and returns it.
    [[nodiscard]] std::uint64_t wait_for_update(std::uint64_t seen, std::chrono::milliseconds timeout) const;
    [[nodiscard]] bool stopped() const;
    // What went wrong since the last call (a stream refused, dropped, a
    // malformed event), once each, oldest first: the latest kMaxWarnings,
    // after a first line saying how many earlier ones were dropped, if any.
    [[nodiscard]] std::vector<std::string> take_warnings();
    // Ends every stream and joins its thread (idempotent, and safe from several
    // threads at once: each returns once all are joined; the destructor does too).
    void stop();

  private:
    struct Stream;
    ZeusdPowerStream() = default;
    void run(const Stream& stream);
    // One event's lines (up to its blank line): each `data:` line is an event.
    void consume_block(const Stream& stream, std::string_view block);
    void consume_event(const Stream& stream, const std::string& data);
    void warn(std::string text);

    std::map<std::string, double> offsets_;
    std::chrono::milliseconds reconnect_delay_{1000};
    mutable std::mutex mutex_;
    std::mutex join_mutex_;  // held by the stop() that joins the threads
    mutable std::condition_variable changed_;
    bool stopping_ = false;
    std::uint64_t updates_ = 0;
    std::map<std::string, StreamedPower> readings_;
    std::deque<std::string> warnings_;  // the latest kMaxWarnings
    std::uint64_t dropped_warnings_ = 0;
    std::vector<std::unique_ptr<Stream>> streams_;
    std::vector<std::thread> threads_;
};

}  // namespace zeus
