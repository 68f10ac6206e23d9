// The load both outage tests put on a batch-size server while its database
// goes away for a while (PostgreSQL restarting, postgres_outage_test.cpp;
// another process holding a SQLite file's write lock, sqlite_lock_test.cpp):
// four jobs, each predicted in a loop by a client thread of its own.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bso/router.hpp"

namespace zeus::bso::testing {

struct Answer {
    int status = 0;
    nlohmann::json body;
    std::string retry_after;  // the Retry-After header, empty when there is none
};

inline Answer call(Router& router, http_server::http::verb method, const std::string& target,
                   const std::string& body = "") {
    http_server::Request request{method, target, 11};
    request.body() = body;
    const auto response = router.handle(request);
    Answer answer{static_cast<int>(response.status), nlohmann::json::parse(response.body), {}};
    for (const auto& [name, value] : response.headers) {
        if (name == "Retry-After") answer.retry_after = value;
    }
    return answer;
}

// Runs the load, calls `outage` (which returns once the database is back,
// false when it could not make the outage), and checks: every failure has a
// status in `failure_statuses` and names no SQL, a 503 says when to retry,
// requests succeed again within 2 s of the database's return, and every
// trial the server acknowledged is still there to end.
inline void expect_load_survives(Router& router, const std::function<bool()>& outage,
                                 const std::set<int>& failure_statuses) {
    namespace http = http_server::http;
    using nlohmann::json;
    json job{{"job_id_prefix", "load"}, {"batch_sizes", {8, 16, 32}}, {"default_batch_size", 16},
             {"max_power", 300.0},      {"number_of_gpus", 1},        {"gpu_model", "A100"}};
    std::vector<std::string> jobs;
    for (int i = 0; i < 4; ++i) {
        auto created = call(router, http::verb::post, "/jobs", job.dump());
        ASSERT_EQ(created.status, 201) << created.body;
        jobs.push_back(created.body["job_id"]);
    }
    std::atomic<bool> stop{false};
    std::atomic<bool> restarted{false};
    std::mutex acknowledged_mutex;
    std::vector<json> acknowledged;  // trials the server answered
    std::vector<std::chrono::steady_clock::time_point> last_failure(jobs.size());
    std::vector<std::thread> clients;
    for (std::size_t c = 0; c < jobs.size(); ++c) {
        clients.emplace_back([&, c] {
            while (!stop) {
                const auto answer = call(router, http::verb::get, "/jobs/batch_size?job_id=" + jobs[c]);
                if (answer.status == 200) {
                    const std::lock_guard lock(acknowledged_mutex);
                    acknowledged.push_back(answer.body);
                } else {
                    EXPECT_TRUE(failure_statuses.contains(answer.status)) << answer.status << " " << answer.body;
                    EXPECT_EQ(answer.body.dump().find("SELECT"), std::string::npos) << answer.body;
                    EXPECT_EQ(answer.body.dump().find("INSERT"), std::string::npos) << answer.body;
                    if (answer.status == 503) {
                        EXPECT_FALSE(answer.retry_after.empty()) << answer.body;
                    }
                    if (restarted) last_failure[c] = std::chrono::steady_clock::now();
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const bool made = outage();
    const auto back = std::chrono::steady_clock::now();
    restarted = true;
    if (made) std::this_thread::sleep_for(std::chrono::seconds(4));
    stop = true;
    for (auto& client : clients) client.join();
    ASSERT_TRUE(made);
    for (const auto& failure : last_failure) {
        if (failure.time_since_epoch().count() == 0) continue;
        EXPECT_LT(failure - back, std::chrono::seconds(2)) << "requests still failed long after the database was back";
    }
    // Every request succeeds now, on every pooled connection.
    std::size_t after = 0;
    for (int i = 0; i < 8; ++i) {
        const auto answer = call(router, http::verb::get, "/jobs/batch_size?job_id=" + jobs[0]);
        EXPECT_EQ(answer.status, 200) << answer.body;
        if (answer.status == 200) ++after;
    }
    EXPECT_EQ(after, 8U);
    // Nothing answered was lost: every acknowledged trial is still there to end.
    for (const auto& trial : acknowledged) {
        const auto answer = call(router, http::verb::patch, "/trials", trial.dump());
        EXPECT_EQ(answer.status, 200) << trial << " was acknowledged and is gone: " << answer.body;
    }
}

}  // namespace zeus::bso::testing
