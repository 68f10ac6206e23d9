// The C++ PipelineFrequencyOptimizer against the PFO server (in-process, on
// a loopback port) on simulated GPUs: two ranks as threads get their
// schedules through the barrier, every instruction locks the GPU's clock to
// the schedule's (redundant changes skipped), the schedule contract is
// enforced, and the clock is back to the driver's when the optimizer goes.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "http_server/server.hpp"
#include "perseus/router.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/perseus/pipeline_frequency.hpp"
#include "support/build_paths.hpp"

namespace zeus::perseus {
namespace {

// Stage 0 and stage 1 of 1F1B with two microbatches; repeated clocks on purpose.
const std::vector<InstructionSchedule> kSolution = {
    {{"forward", 1410}, {"forward", 1200}, {"backward", 1200}, {"backward", 1005}},
    {{"forward", 900}, {"backward", 900}, {"forward", 1305}, {"backward", 1410}},
};

class PipelineClientTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("zeus-pfo-client-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        ::setenv("ZEUS_SIM_STATE", (dir_ / "sim-state").c_str(), 1);
        ::unsetenv("ZEUS_SIM_CONFIG");
        GpuOptions options;
        options.simulate = true;
        options.simulator_library = zeus::testing::sim_nvml_library_path();
        gpus_ = Gpus::open(options);
        ASSERT_TRUE(gpus_.status().ok()) << gpus_.status().error().describe();
        ASSERT_GE(gpus_.size(), 2U);

        std::ofstream(dir_ / "solution.json") << nlohmann::json(kSolution).dump();
        perseus::PfoSettings settings;
        settings.solution_path = dir_ / "solution.json";
        settings.dump_data = false;
        jobs_ = std::make_unique<perseus::JobManager>(settings);
        router_ = std::make_unique<perseus::Router>(*jobs_);
        server_ = std::make_unique<http_server::Server>(
            io_, [this](const http_server::Request& r, const http_server::Peer&, http_server::Respond respond) {
                router_->handle(r, respond);
            });
        const auto port = server_->listen_tcp("127.0.0.1:0");
        ASSERT_TRUE(port.ok()) << port.error().describe();
        url_ = "http://127.0.0.1:" + std::to_string(*port);
        for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
    }
    void TearDown() override {
        server_->stop();
        work_.reset();
        io_.stop();
        for (auto& t : threads_) t.join();
        std::filesystem::remove_all(dir_);
    }

    PipelineFrequencyOptions options(std::size_t rank) {
        PipelineFrequencyOptions o;
        o.server_url = url_;
        o.rank = rank;
        o.pp_rank = rank;
        o.pp_degree = 2;
        o.world_size = 2;
        o.job_metadata = "cpp";
        o.share_job_id = [this](std::optional<std::string> id) -> Result<std::string> {
            if (id) job_id_.set_value(*id);
            return shared_id_.get();
        };
        return o;
    }

    long long min_clock(Gpu& gpu) {
        const auto clocks = gpu.supported_graphics_clocks().value();
        return std::min_element(clocks.begin(), clocks.end())->count();
    }

    std::filesystem::path dir_;
    Gpus gpus_;
    boost::asio::io_context io_;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{io_.get_executor()};
    std::vector<std::thread> threads_;
    std::unique_ptr<perseus::JobManager> jobs_;
    std::unique_ptr<perseus::Router> router_;
    std::unique_ptr<http_server::Server> server_;
    std::string url_;
    std::promise<std::string> job_id_;
    std::shared_future<std::string> shared_id_ = job_id_.get_future().share();
};

TEST_F(PipelineClientTest, EachRankLocksItsSchedulesClocksAndRestoresThem) {
    std::vector<std::string> failures(2);
    std::vector<std::string> ids(2);
    auto rank_main = [&](std::size_t rank) {
        Gpu& gpu = gpus_[rank];
        auto created = PipelineFrequencyOptimizer::create(gpu, options(rank));
        if (!created) {
            failures[rank] = created.error().describe();
            return;
        }
        auto pfo = std::move(created).value();
        ids[rank] = pfo->job_id();
        if (pfo->schedule() != kSolution[rank]) failures[rank] += "wrong schedule; ";
        // Changes the controller must make: each clock that differs from the one before (from the maximum).
        std::size_t expected_changes = 0;
        long long previous = 1410;
        for (int step = 0; step < 3; ++step) {
            pfo->on_step_begin();
            for (const auto& [name, freq] : kSolution[rank]) {
                if (auto begun = pfo->on_instruction_begin(name); !begun) failures[rank] += begun.error().describe() + "; ";
                if (freq != previous) ++expected_changes;
                previous = freq;
                // An idle simulated GPU runs at its locked minimum.
                if (gpu.sm_clock().value().count() != freq)
                    failures[rank] += "clock " + std::to_string(gpu.sm_clock().value().count()) + " != " + std::to_string(freq) + "; ";
                pfo->on_instruction_end(name);
            }
            if (auto ended = pfo->on_step_end(); !ended) failures[rank] += ended.error().describe() + "; ";
        }
        if (pfo->frequency_controller().changes() != expected_changes)
            failures[rank] += "changes " + std::to_string(pfo->frequency_controller().changes()) + " != " +
                              std::to_string(expected_changes) + "; ";
        // The contract: a wrong name, an extra instruction, a step cut short.
        if (pfo->on_instruction_begin("backward").ok() != (kSolution[rank][0].first == "backward"))
            failures[rank] += "a wrong first instruction was accepted; ";
        (void)pfo->on_instruction_begin(kSolution[rank][0].first);
        if (pfo->on_step_end().ok()) failures[rank] += "a step with instructions left was accepted; ";
        pfo.reset();
        if (gpu.sm_clock().value().count() != min_clock(gpu)) failures[rank] += "clock not restored; ";
    };
    std::thread rank1(rank_main, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rank 1 waits for rank 0's job id
    rank_main(0);
    rank1.join();
    EXPECT_EQ(failures[0], "");
    EXPECT_EQ(failures[1], "");
    EXPECT_EQ(ids[0], ids[1]);
    EXPECT_TRUE(ids[0].ends_with("+dp1+pp2+tp1+PointSolution+cpp")) << ids[0];
}

TEST_F(PipelineClientTest, AServerErrorIsReportedNotHidden) {
    auto o = options(0);
    o.share_job_id = nullptr;
    o.world_size = 1;
    o.pp_degree = 1;
    // A one-rank job against a two-entry solution: the schedule request fails with the reason.
    auto created = PipelineFrequencyOptimizer::create(gpus_[0], o);
    ASSERT_FALSE(created.ok());
    EXPECT_NE(created.error().message.find("assumes 2 ranks, but the job has 1"), std::string::npos)
        << created.error().describe();
    EXPECT_EQ(gpus_[0].sm_clock().value().count(), min_clock(gpus_[0])) << "the failed start left a clock locked";
}

}  // namespace
}  // namespace zeus::perseus
