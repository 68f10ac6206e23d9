// Load benchmark of `zeus bso-server`: N concurrent simulated recurring jobs
// (default 64), each registering, asking for a batch size and reporting every
// epoch over its own keep-alive connection, against a running server. Prints
// requests/s, latency percentiles and errors (docs/benchmarks.md "BSO load").
//
//   bso_load --url http://127.0.0.1:PORT [--jobs N] [--recurrences N] [--epochs N] [--rate R]
//
// Without --rate every job sends its next request as soon as the last one is
// answered (saturation: the most the server does). With --rate the jobs
// together offer R requests/s, each on its own schedule, and a request's
// latency counts from when it was due, so a late send counts against the
// server too (no coordinated omission): the latency at that throughput.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "zeus/platform/http_client.hpp"

namespace {

struct JobLog {
    std::vector<double> latencies_ms;
    std::size_t errors = 0;
    std::string first_error;
};

// interval 0: back to back; otherwise one request per interval from `first`.
void run_job(const std::string& url, int index, int recurrences, int epochs, std::chrono::nanoseconds interval,
             std::chrono::steady_clock::time_point first, JobLog& log) {
    zeus::HttpClient client(zeus::HttpEndpoint{url, "", "bso-server", "", "", {}});
    auto due = first;
    auto call = [&](std::string_view method, const std::string& target, const std::string& body) -> std::string {
        zeus::HttpRequest request;
        request.method = method;
        request.target = target;
        request.body = body;
        if (!body.empty()) request.content_type = "application/json";
        auto start = std::chrono::steady_clock::now();
        if (interval.count() > 0) {
            std::this_thread::sleep_until(due);
            start = due;
            due += interval;
        }
        auto reply = client.request(request);
        log.latencies_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        if (!reply || reply.value().status >= 300) {
            if (log.errors++ == 0) log.first_error = reply ? reply.value().body : reply.error().describe();
            return {};
        }
        return reply.value().body;
    };
    const std::string job_id = fmt::format("load-{}-{}", index, std::chrono::steady_clock::now().time_since_epoch().count());
    call("POST", "/jobs",
         fmt::format(R"({{"job_id":"{}","job_id_prefix":"load","batch_sizes":[16,32,64,128],"default_batch_size":64,)"
                     R"("max_epochs":{},"max_power":300,"number_of_gpus":1,"gpu_model":"sim"}})",
                     job_id, epochs + 1));
    for (int r = 0; r < recurrences; ++r) {
        const auto trial = call("GET", "/jobs/batch_size?job_id=" + job_id, "");
        const auto bs_at = trial.find("\"batch_size\":");
        const auto tn_at = trial.find("\"trial_number\":");
        if (bs_at == std::string::npos || tn_at == std::string::npos) return;
        const long bs = std::stol(trial.substr(bs_at + 13));
        const long number = std::stol(trial.substr(tn_at + 15));
        for (int epoch = 1; epoch <= epochs; ++epoch) {
            const double metric = epoch == epochs ? 0.9 : 0.1;
            call("POST", "/report",
                 fmt::format(R"({{"job_id":"{}","batch_size":{},"trial_number":{},"time":{},"energy":{},"metric":{},"current_epoch":{}}})",
                             job_id, bs, number, 10.0 * epoch, 2000.0 * epoch * (1 + bs / 256.0), metric, epoch));
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Load benchmark of zeus bso-server"};
    std::string url;
    int jobs = 64, recurrences = 3, epochs = 20;
    double rate = 0;
    app.add_option("--url", url, "the server, http://HOST:PORT")->required();
    app.add_option("--jobs", jobs, "concurrent jobs, one connection each")->capture_default_str();
    app.add_option("--recurrences", recurrences, "training runs per job")->capture_default_str();
    app.add_option("--epochs", epochs, "reports per run")->capture_default_str();
    app.add_option("--rate", rate, "offered requests/s of all jobs together (0: as fast as answered)")
        ->check(CLI::Range(0.0, 1e6));
    CLI11_PARSE(app, argc, argv);

    std::vector<JobLog> logs(static_cast<std::size_t>(jobs));
    std::vector<std::thread> threads;
    const auto start = std::chrono::steady_clock::now();
    const auto interval = rate > 0 ? std::chrono::nanoseconds(static_cast<long long>(1e9 * jobs / rate))
                                   : std::chrono::nanoseconds(0);
    for (int i = 0; i < jobs; ++i) {
        // Staggered so that the jobs' requests spread evenly over each interval.
        const auto first = start + std::chrono::milliseconds(50) + interval * i / jobs;
        threads.emplace_back(run_job, url, i, recurrences, epochs, interval, first,
                             std::ref(logs[static_cast<std::size_t>(i)]));
    }
    for (auto& t : threads) t.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> all;
    std::size_t errors = 0;
    std::string first_error;
    for (const auto& log : logs) {
        all.insert(all.end(), log.latencies_ms.begin(), log.latencies_ms.end());
        errors += log.errors;
        if (first_error.empty()) first_error = log.first_error;
    }
    std::sort(all.begin(), all.end());
    auto pct = [&](double p) { return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<std::size_t>(p * static_cast<double>(all.size())))]; };
    std::printf("requests %zu in %.2f s: %.0f req/s; latency ms p50 %.2f p90 %.2f p99 %.2f max %.2f; errors %zu%s%s\n",
                all.size(), seconds, static_cast<double>(all.size()) / seconds, pct(0.5), pct(0.9), pct(0.99),
                all.empty() ? 0.0 : all.back(), errors, errors ? " first: " : "", first_error.c_str());
    return errors == 0 ? 0 : 1;
}
