// The PFO server's REST API (zeus/optimizer/pipeline_frequency/server/
// router.py) over a JobManager: routes, models, status codes, FastAPI's error
// bodies. GET /schedule answers later, through `respond`, when the job's last
// rank has asked, so it never holds a server thread. No sockets here: tests
// drive it directly; `zeus perseus-server` gives it to the HTTP server.
#pragma once

#include "http_server/message.hpp"
#include "perseus/job_manager.hpp"

namespace zeus::perseus {

class Router {
  public:
    explicit Router(JobManager& jobs) : jobs_(jobs) {}
    // Calls `respond` exactly once, now or later.
    void handle(const http_server::Request& request, const http_server::Respond& respond);

  private:
    JobManager& jobs_;
};

}  // namespace zeus::perseus
