// `zeus exporter`'s server: GET /metrics on the project's HTTP server
// component, handing out a DeviceMetrics sampler's latest sweep (Prometheus
// text, or OpenMetrics when the scraper asks). docs/metrics.md.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "zeus/metrics/device_metrics.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::metrics {

class Exporter {
  public:
    // `metrics` must outlive the Exporter.
    explicit Exporter(const DeviceMetrics& metrics);
    ~Exporter();
    Exporter(const Exporter&) = delete;
    Exporter& operator=(const Exporter&) = delete;

    // "cannot listen on ADDRESS: REASON"; otherwise the bound port (the
    // system's pick for port 0).
    [[nodiscard]] Result<unsigned short> listen_tcp(const std::string& address);
    // Catches the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT), calls
    // `ready` (say where it listens there), then serves until one arrives and
    // returns its number. Scrapes only copy a rendered string: two threads
    // serve many scrapers.
    int serve_until_signalled(const std::function<void()>& ready = {});

  private:
    struct Parts;
    std::unique_ptr<Parts> parts_;
};

}  // namespace zeus::metrics
