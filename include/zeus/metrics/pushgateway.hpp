// Pushing metrics to a Prometheus Pushgateway the way the Python client's
// push_to_gateway does (what the original's metrics call): PUT the whole
// registry, in the Prometheus text format, to <url>/metrics/job/<job>,
// replacing what that job pushed before. Over the project's one HTTP client.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/metrics/exposition.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/http_client.hpp"

namespace zeus::metrics {

class Pushgateway {
  public:
    // `url` as the Python client takes it: "http://host:port" or
    // "https://...", or "host:port" (http:// is assumed). A malformed URL or
    // an empty job is an InvalidArgument naming it and the expected form;
    // nothing is contacted here.
    static Result<std::unique_ptr<Pushgateway>> open(const std::string& url, const std::string& job);

    // PUT (replace the job's group) and POST (replace only the families
    // pushed) as push_to_gateway and pushadd_to_gateway. An unreachable
    // gateway or an answer other than 200/202 is an Error naming the URL.
    Status push(const std::vector<MetricFamily>& families);
    Status push_add(const std::vector<MetricFamily>& families);

    // Where pushes go: "http://host:port/metrics/job/<escaped job>".
    [[nodiscard]] const std::string& push_url() const { return push_url_; }

  private:
    Pushgateway(std::string base_url, std::string target);
    Status send(std::string_view method, const std::vector<MetricFamily>& families);

    std::string target_;    // "/metrics/job/..."
    std::string push_url_;  // base + target, for messages
    HttpClient client_;
};

// The grouping-key path segment for `job` as the Python client escapes it:
// "job/<url-encoded>", or "job@base64/<urlsafe base64>" when it holds a '/'.
[[nodiscard]] std::string job_path(const std::string& job);

}  // namespace zeus::metrics
