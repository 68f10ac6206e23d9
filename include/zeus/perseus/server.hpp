// The PFO server (the original's zeus/optimizer/pipeline_frequency/server/)
// as one object: its jobs, its REST API and the idle-job cleanup on the
// project's HTTP server component. `zeus perseus-server` serves it until a
// signal; `zeus perseus simulate` runs one on a loopback port of its own
// process. docs/perseus.md.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "zeus/platform/error.hpp"

namespace zeus::perseus {

// PFOServerSettings (environment prefix ZEUS_PFO_) as the server uses them.
struct PfoSettings {
    std::string scheduler = "PointSolution";  // or PointSolution3D
    std::filesystem::path solution_path;      // scheduler_args' solution_path
    bool dump_data = true;
    std::filesystem::path dump_dir = "./dump";
    std::chrono::seconds max_job_idle_time{60 * 60 * 24 * 7};
};

// Checks the settings as the original does at startup (a known scheduler, a
// solution path) and that the solution file reads; throws a
// std::runtime_error saying why.
void check_settings(const PfoSettings& settings);

struct ServerOptions {
    PfoSettings settings;
    std::string name = "zeus-perseus-server";  // the Server header
    unsigned threads = 2;                       // a waiting GET /schedule holds none
    // How long a client may take to send a request, or sit idle between requests.
    std::chrono::milliseconds request_timeout{30000};
    // Warnings (a dump that could not be written) and forgotten idle jobs.
    std::function<void(const std::string&)> log;
};

class Server {
  public:
    // Does not check the settings: see check_settings().
    explicit Server(ServerOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // "cannot listen on ADDRESS: REASON"; otherwise the bound port (the
    // system's pick for port 0).
    [[nodiscard]] Result<unsigned short> listen_tcp(const std::string& address);
    // Catches the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT), calls
    // `ready` (say where it listens there), then serves until one arrives and
    // returns its number, forgetting idle jobs every 60 s (or the idle time,
    // if shorter).
    int serve_until_signalled(const std::function<void()>& ready = {});
    // Serves on background threads until the Server is destroyed.
    void start();

  private:
    struct Parts;
    std::unique_ptr<Parts> parts_;
};

}  // namespace zeus::perseus
