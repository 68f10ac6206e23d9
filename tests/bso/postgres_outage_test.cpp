// The REST API over a private PostgreSQL server that restarts, or whose
// backends end, under load (src/bso/database.cpp's connection pool).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "bso/router.hpp"
#include "load_through_outage.hpp"
#include "postgres_cluster.hpp"

namespace zeus::bso {
namespace {

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
        testing::expect_load_survives(router, outage, {500, 503});
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
