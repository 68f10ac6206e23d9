// Which GPUs a step was given, from Slurm's variables, in their order of trust.
#include <gtest/gtest.h>

#include <map>

#include "slurm/gpu_selection.hpp"

namespace zeus::slurm {
namespace {

EnvironmentLookup environment(std::map<std::string, std::string> variables) {
    return [variables](std::string_view name) -> std::optional<std::string> {
        const auto found = variables.find(std::string(name));
        if (found == variables.end()) return std::nullopt;
        return found->second;
    };
}

TEST(SlurmGpuSelection, StepGpusWinOverJobGpusWhichWinOverCudaVisibleDevices) {
    auto step = select_gpus(
        environment({{"SLURM_STEP_GPUS", "3,1"}, {"SLURM_JOB_GPUS", "0,1,3"}, {"CUDA_VISIBLE_DEVICES", "0,1"}}));
    ASSERT_TRUE(step.ok()) << step.error().describe();
    EXPECT_EQ(step->ids, (std::vector<unsigned>{1, 3}));
    EXPECT_EQ(step->source, "SLURM_STEP_GPUS");
    auto job = select_gpus(environment({{"SLURM_JOB_GPUS", "2"}, {"CUDA_VISIBLE_DEVICES", "0"}}));
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->ids, (std::vector<unsigned>{2}));
    EXPECT_EQ(job->source, "SLURM_JOB_GPUS");
    auto cuda = select_gpus(environment({{"CUDA_VISIBLE_DEVICES", "1,0,1"}}));
    ASSERT_TRUE(cuda.ok());
    EXPECT_EQ(cuda->ids, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(cuda->source, "CUDA_VISIBLE_DEVICES");
}

TEST(SlurmGpuSelection, NoVariableOrAnEmptyOneIsNoGpus) {
    auto none = select_gpus(environment({}));
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->ids.empty());
    EXPECT_TRUE(none->source.empty());
    auto empty = select_gpus(environment({{"SLURM_STEP_GPUS", ""}}));
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->ids.empty());
}

TEST(SlurmGpuSelection, AValueThatIsNotAListOfIndicesIsAnErrorNamingIt) {
    for (const std::string value : {"GPU-3c821fbf-5910", "0,,1", "0,", "-1", "1a", "MIG-1/2/3"}) {
        auto gpus = select_gpus(environment({{"SLURM_STEP_GPUS", value}}));
        ASSERT_FALSE(gpus.ok()) << value;
        EXPECT_NE(gpus.error().describe().find("SLURM_STEP_GPUS=\"" + value + "\""), std::string::npos)
            << gpus.error().describe();
    }
}

}  // namespace
}  // namespace zeus::slurm
