// Test fixture: a fresh simulator (own config and state file) for each test,
// reached through the product's real NVML backend. Each test runs in its own
// process (gtest_discover_tests), so the environment set here is private.
#pragma once

#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_directory.hpp"
#include "zeus/device/gpus.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {

class SimulatedGpus : public ::testing::Test {
  protected:
    void SetUp() override {
        setenv("ZEUS_SIM_STATE", (dir_ / "state").c_str(), 1);
        unsetenv("ZEUS_SIM_CONFIG");
        unsetenv("CUDA_VISIBLE_DEVICES");
    }
    // Writes `json` as the simulator's configuration.
    void configure(const std::string& json) {
        const auto path = dir_ / "sim.json";
        std::ofstream(path) << json;
        setenv("ZEUS_SIM_CONFIG", path.c_str(), 1);
    }

    static GpuOptions simulated(std::optional<std::string> visible = std::nullopt) {
        GpuOptions options;
        options.simulate = true;
        options.simulator_library = zeus::testing::sim_nvml_library_path();
        options.visible_devices = std::move(visible);
        return options;
    }

    static double truth(unsigned gpu) {
        double j = 0;
        EXPECT_EQ(zeusSimGroundTruthEnergy(gpu, &j), ZEUS_SIM_OK) << zeusSimLastError();
        return j;
    }
    // Ground truth just before and just after one edge of a window, so an
    // accuracy check stays exact however long the scheduler holds the test
    // between reading the truth and the monitor reading its counter.
    struct EdgeTruth {
        std::vector<double> before;
        std::vector<double> after;
    };
    template <class Action>
    static EdgeTruth truth_around(unsigned gpu_count, Action&& action) {
        EdgeTruth edge;
        for (unsigned g = 0; g < gpu_count; ++g) edge.before.push_back(truth(g));
        action();
        for (unsigned g = 0; g < gpu_count; ++g) edge.after.push_back(truth(g));
        return edge;
    }
    // `measured` lies between the shortest and the longest span the two
    // edges allow, each widened by `tolerance` (relative).
    static void expect_energy_between(double measured, const EdgeTruth& begin, const EdgeTruth& end, unsigned gpu,
                                      double tolerance) {
        const double shortest = end.before.at(gpu) - begin.after.at(gpu);
        const double longest = end.after.at(gpu) - begin.before.at(gpu);
        EXPECT_GE(measured, shortest * (1 - tolerance)) << "GPU " << gpu << ": shortest span " << shortest << " J";
        EXPECT_LE(measured, longest * (1 + tolerance)) << "GPU " << gpu << ": longest span " << longest << " J";
    }

    static void advance(double seconds) { ASSERT_EQ(zeusSimAdvance(seconds), ZEUS_SIM_OK) << zeusSimLastError(); }

    TestDirectory directory_;
    const std::filesystem::path& dir_ = directory_.path();
};

}  // namespace zeus::testing
