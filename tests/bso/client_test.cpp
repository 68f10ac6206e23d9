// The C++ client (include/zeus/bso/client.hpp) against the
// server in-process over loopback HTTP, with a scripted EnergyMonitor whose
// every window is `kEpochSeconds` and `kEpochJoules`: what the server stores
// is the client's cumulative sums.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <set>
#include <thread>

#include "bso/router.hpp"
#include "http_server/server.hpp"
#include "postgres_cluster.hpp"
#include "zeus/bso/client.hpp"

namespace zeus::bso {
namespace {

constexpr double kEpochSeconds = 2.0;
constexpr double kEpochJoules = 500.0;

class ScriptedMonitor final : public EnergyMonitor {
public:
    Status begin_window(std::string_view name, bool, bool) override {
        if (!open_.insert(std::string(name)).second) return Error{ErrorCode::InvalidState, "window already open", "", 0};
        return {};
    }
    Result<Measurement> end_window(std::string_view name, bool, bool) override {
        if (open_.erase(std::string(name)) == 0) return Error{ErrorCode::NotFound, "no such window", "", 0};
        Measurement m;
        m.time = Seconds{kEpochSeconds};
        m.gpu_energy[0] = EnergyValue{Joules{kEpochJoules}, EnergySource::HardwareCounter, {}};
        return m;
    }
    std::vector<std::string> reset_windows() override { return {}; }
    [[nodiscard]] std::vector<std::string> open_windows() const override { return {open_.begin(), open_.end()}; }
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return gpus_; }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return cpus_; }

private:
    std::set<std::string> open_;
    std::vector<unsigned> gpus_{0};
    std::vector<unsigned> cpus_;
};

class BsoClient : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("bso-client-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        service_ = std::make_unique<Service>(Database::open((dir_ / "bso.db").string()));
        router_ = std::make_unique<Router>(*service_);
        server_ = std::make_unique<http_server::Server>(
            io_, [this](const http_server::Request& r, const http_server::Peer&, http_server::Respond respond) {
                respond(router_->handle(r));
            });
        const auto port = server_->listen_tcp("127.0.0.1:0");
        ASSERT_TRUE(port.ok()) << port.error().describe();
        url_ = "http://127.0.0.1:" + std::to_string(*port);
        thread_ = std::thread([this] { io_.run(); });
    }
    void TearDown() override {
        if (server_) server_->stop();
        work_.reset();
        io_.stop();
        if (thread_.joinable()) thread_.join();
        server_.reset();
        std::filesystem::remove_all(dir_);
    }
    JobSpec job() {
        JobSpec spec;
        spec.job_id = "cpp-job";
        spec.job_id_prefix = "cpp";
        spec.batch_sizes = {32, 64, 128};
        spec.default_batch_size = 64;
        spec.max_epochs = 5;
        spec.beta_knob = std::nullopt;
        return spec;
    }
    std::vector<Trial> stored() { return Database::open((dir_ / "bso.db").string())->trials("cpp-job"); }

    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ = boost::asio::make_work_guard(io_);
    std::filesystem::path dir_;
    std::unique_ptr<Service> service_;
    std::unique_ptr<Router> router_;
    std::unique_ptr<http_server::Server> server_;
    std::thread thread_;
    std::string url_;
    ScriptedMonitor monitor_;
    const GpuConfig gpus_{300.0, 1, "sim"};
};

TEST_F(BsoClient, ReportsCumulativeTimeAndEnergyUntilTheServerStops) {
    {
        BatchSizeOptimizer bso(monitor_, url_, job(), gpus_);
        EXPECT_EQ(bso.get_batch_size(), 64);  // the default first
        bso.on_train_begin();
        for (int epoch = 1; epoch <= 3 && !bso.training_finished(); ++epoch) bso.on_evaluate(epoch == 3 ? 0.9 : 0.1);
        EXPECT_TRUE(bso.training_finished());
        EXPECT_TRUE(monitor_.open_windows().empty());
    }
    auto trials = stored();
    ASSERT_EQ(trials.size(), 1U);
    EXPECT_EQ(trials[0].status, TrialStatus::Succeeded);
    EXPECT_EQ(trials[0].converged, true);
    EXPECT_DOUBLE_EQ(*trials[0].time, 3 * kEpochSeconds);
    EXPECT_DOUBLE_EQ(*trials[0].energy, 3 * kEpochJoules);
}

TEST_F(BsoClient, ARunThatNeverConvergesThrowsAndTheNextRunExploresOn) {
    {
        BatchSizeOptimizer bso(monitor_, url_, job(), gpus_);
        EXPECT_EQ(bso.get_batch_size(), 64);
        bso.on_train_begin();
        EXPECT_THROW(
            {
                for (int epoch = 1; epoch <= 5; ++epoch) bso.on_evaluate(0.1);
            },
            TrainFailError);
    }
    BatchSizeOptimizer next(monitor_, url_, job(), gpus_);
    EXPECT_EQ(next.get_batch_size(), 128);  // 64 failed: down stops, up is next
}

TEST_F(BsoClient, AnAbandonedRunsTrialFailsWhenTheClientGoesAway) {
    {
        BatchSizeOptimizer bso(monitor_, url_, job(), gpus_);
        (void)bso.get_batch_size();
        bso.on_train_begin();
        bso.on_evaluate(0.1);
    }
    auto trials = stored();
    ASSERT_EQ(trials.size(), 1U);
    EXPECT_EQ(trials[0].status, TrialStatus::Failed);
}

TEST_F(BsoClient, ServerErrorsAndOrderMistakesAreNamed) {
    auto conflicting = job();
    { BatchSizeOptimizer first(monitor_, url_, job(), gpus_); }
    conflicting.eta_knob = 0.9;
    try {
        BatchSizeOptimizer second(monitor_, url_, conflicting, gpus_);
        FAIL() << "a conflicting spec was accepted";
    } catch (const ZeusError& e) {
        EXPECT_NE(std::string(e.what()).find("409"), std::string::npos) << e.what();
    }
    BatchSizeOptimizer bso(monitor_, url_, job(), gpus_);
    EXPECT_THROW(bso.on_evaluate(0.5), ZeusError);  // before get_batch_size
    BatchSizeOptimizer other_rank(monitor_, url_, job(), gpus_, 1);
    EXPECT_THROW((void)other_rank.get_batch_size(), ZeusError);
}

}  // namespace
}  // namespace zeus::bso
