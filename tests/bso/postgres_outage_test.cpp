// The REST API over a private PostgreSQL server that restarts, or whose
// backends end, under load (src/bso/database.cpp's connection pool).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bso/router.hpp"
#include "postgres_cluster.hpp"

namespace zeus::bso {
namespace {

namespace http = http_server::http;
using nlohmann::json;
using testing::cluster;

// PostgreSQL restarted (or the backends ended) under load: the pooled
// connections are replaced, every request succeeds again within seconds, the
// outage is logged once, and no write that was answered is lost.
class BsoPostgresOutage : public ::testing::Test {
protected:
    void SetUp() override {
        if (cluster().uri().empty()) GTEST_SKIP() << "no PostgreSQL server: " << cluster().error();
        static std::atomic<int> counter{0};
        name_ = "bso_outage_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
        location_ = cluster().new_database(name_);
    }

    void survives(const std::function<bool()>& outage) {
        std::vector<std::unique_ptr<Database>> pool;
        for (int i = 0; i < 4; ++i) pool.push_back(Database::open(location_));
        Service service(std::move(pool));
        std::mutex log_mutex;
        std::vector<std::string> logged;
        service.set_log([&](const std::string& line) {
            const std::lock_guard lock(log_mutex);
            logged.push_back(line);
        });
        Router router(service);
        const auto call = [&router](http::verb method, const std::string& target, const std::string& body = "") {
            http_server::Request request{method, target, 11};
            request.body() = body;
            const auto response = router.handle(request);
            return std::make_pair(static_cast<int>(response.status), json::parse(response.body));
        };
        json job{{"job_id_prefix", "load"}, {"batch_sizes", {8, 16, 32}}, {"default_batch_size", 16},
                 {"max_power", 300.0}, {"number_of_gpus", 1}, {"gpu_model", "A100"}};
        std::vector<std::string> jobs;
        for (int i = 0; i < 4; ++i) {
            auto created = call(http::verb::post, "/jobs", job.dump());
            ASSERT_EQ(created.first, 201) << created.second;
            jobs.push_back(created.second["job_id"]);
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
                    const auto [status, body] = call(http::verb::get, "/jobs/batch_size?job_id=" + jobs[c]);
                    if (status == 200) {
                        const std::lock_guard lock(acknowledged_mutex);
                        acknowledged.push_back(body);
                    } else {
                        EXPECT_TRUE(status == 500 || status == 503) << body;
                        EXPECT_EQ(body.dump().find("SELECT"), std::string::npos) << body;
                        if (restarted) last_failure[c] = std::chrono::steady_clock::now();
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
            });
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ASSERT_TRUE(outage());
        const auto back = std::chrono::steady_clock::now();
        restarted = true;
        std::this_thread::sleep_for(std::chrono::seconds(4));
        stop = true;
        for (auto& client : clients) client.join();
        std::size_t after_restart = 0;
        for (const auto& failure : last_failure) {
            if (failure.time_since_epoch().count() == 0) continue;
            EXPECT_LT(failure - back, std::chrono::seconds(2)) << "requests still failed long after PostgreSQL was back";
        }
        // Every request succeeds now, on every pooled connection.
        for (int i = 0; i < 8; ++i) {
            const auto [status, body] = call(http::verb::get, "/jobs/batch_size?job_id=" + jobs[0]);
            EXPECT_EQ(status, 200) << body;
            if (status == 200) ++after_restart;
        }
        EXPECT_EQ(after_restart, 8U);
        // Nothing answered was lost: every acknowledged trial is still there to end.
        for (const auto& trial : acknowledged) {
            const auto [status, body] = call(http::verb::patch, "/trials", trial.dump());
            EXPECT_EQ(status, 200) << trial << " was acknowledged and is gone: " << body;
        }
        const std::lock_guard lock(log_mutex);
        ASSERT_EQ(logged.size(), 2U) << "the outage is logged once, and the recovery once";
        EXPECT_NE(logged[0].find("connection to PostgreSQL broke"), std::string::npos) << logged[0];
        EXPECT_NE(logged[1].find("reconnected to PostgreSQL"), std::string::npos) << logged[1];
    }

    std::string name_;
    std::string location_;
};

TEST_F(BsoPostgresOutage, ARestartUnderLoadIsSurvived) {
    survives([] { return cluster().restart(); });
}

TEST_F(BsoPostgresOutage, TerminatedBackendsAreReplaced) {
    survives([this] { return cluster().terminate_backends(name_); });
}

}  // namespace
}  // namespace zeus::bso
