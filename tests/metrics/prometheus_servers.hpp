// The real Prometheus server and Pushgateway (Debian's packages, installed by
// scripts/setup.sh), each started by a test on a loopback port it picks, in a
// temporary directory, and stopped when the object goes. Our own servers
// (zeus exporter, zeusd) start the same way on port 0 and say which port.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/build_paths.hpp"

namespace zeus::testing {

// A free loopback TCP port (bound, read, released: a server started right
// after gets it unless another process races for it). Only for servers that
// cannot listen on port 0 and say which port they got: Prometheus and the
// Pushgateway.
[[nodiscard]] unsigned free_port();

class ServerProcess {
  public:
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;
    ~ServerProcess();  // SIGTERM, then SIGKILL after 5 s; removes the directory

    [[nodiscard]] const std::string& base_url() const { return base_url_; }
    [[nodiscard]] unsigned port() const { return port_; }
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
    // The server's own log (stdout and stderr), for failure messages.
    [[nodiscard]] std::string log() const;

    struct Launch {
        std::string binary;
        std::string what;  // for messages
        std::vector<std::string> args;
        std::string listen_flag = "--web.listen-address=";  // followed by 127.0.0.1:PORT
        std::string ready_path = "/-/ready";                // 200 once it serves
        std::optional<unsigned> port;                        // default: a free one
        // Ours: listens on 127.0.0.1:0 and prints this text and 127.0.0.1:PORT
        // (support/listening_line.hpp), the port it got; `port` is then unused.
        std::optional<std::string> listening_marker = std::nullopt;
    };
    // Starts the binary in `dir` (removed at the end); waits until ready_path answers 200.
    ServerProcess(Launch launch, const std::filesystem::path& dir);
    // True while it runs and answered ready.
    [[nodiscard]] bool running() const { return pid_ > 0; }
    // A fresh directory under the temp dir, named after `what`.
    static std::filesystem::path make_dir(const std::string& what);

  private:
    // Polls ready_path on base_url_ until 200 (true), the process exits or 30 s pass.
    bool wait_ready(const std::string& ready_path);
    void stop_now();  // SIGKILL and reap, if running

    std::string what_;
    std::filesystem::path dir_;
    unsigned port_ = 0;
    std::string base_url_;
    pid_t pid_ = -1;
};

// `zeus exporter ARGS...`, the build's CLI, on a loopback port it picks.
class ExporterProcess : public ServerProcess {
  public:
    explicit ExporterProcess(std::vector<std::string> args)
        : ServerProcess(Launch{zeus_cli_path(), "zeus exporter", with_subcommand(std::move(args)),
                               "--listen=", "/metrics", std::nullopt, "zeus exporter: serving http://"},
                        make_dir("exporter")) {}

  private:
    static std::vector<std::string> with_subcommand(std::vector<std::string> args) {
        args.insert(args.begin(), "exporter");
        return args;
    }
};

class Pushgateway : public ServerProcess {
  public:
    // On `port` when given (a test that brings a gateway up late), else a free one.
    explicit Pushgateway(std::optional<unsigned> port = std::nullopt);
};

class PrometheusServer : public ServerProcess {
  public:
    // Scrapes `targets` ("127.0.0.1:PORT", path /metrics) every `interval_s`.
    PrometheusServer(const std::vector<std::string>& targets, double interval_s);
    // With this whole prometheus.yml (a shipped scrape configuration).
    explicit PrometheusServer(const std::string& config_yaml);

  private:
    PrometheusServer(const std::vector<std::string>& targets, double interval_s, const std::filesystem::path& dir);
};

// One sample line of the text exposition format.
struct ParsedSample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};
// Every sample line of `body` (comments skipped); a malformed line fails the test.
[[nodiscard]] std::vector<ParsedSample> parse_exposition(const std::string& body);
// The samples named `name` whose labels include every pair of `match`.
[[nodiscard]] std::vector<ParsedSample> find_samples(const std::vector<ParsedSample>& samples, const std::string& name,
                                                     const std::map<std::string, std::string>& match = {});

// GET `base_url` + `target` with the project's HTTP client; the body, or a failed test.
[[nodiscard]] std::string http_get(const std::string& base_url, const std::string& target,
                                   const std::vector<std::string>& headers = {});

}  // namespace zeus::testing
