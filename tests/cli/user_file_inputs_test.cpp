// Every command and server flag that reads a user's file, fed each problem a
// path can have (platform/user_file.hpp): a directory, a missing path, a FIFO
// (which must not hang), a file that cannot be read and a 1 GiB sparse file
// (refused before it is read). Each is refused with the command's
// bad-input exit code and a message that names the path and the problem;
// never a crash, a hang, a bare exception name or a misleading "empty".
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/command_output.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;

struct FileInput {
    std::string name;     // for the failure message
    std::string command;  // a shell command; {} is the path
    int bad_input_exit = 2;
};

struct PathCase {
    std::string name;
    std::string path;
    std::string says;
};

std::string with_path(std::string command, const std::string& path) {
    const auto at = command.find("{}");
    return command.replace(at, 2, "'" + path + "'");
}

class UserFileInputs : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("zeus-file-inputs-" + std::to_string(::getpid()));
        fs::create_directories(dir_ / "out");
        fifo_ = (dir_ / "pipe").string();
        ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);
        huge_ = (dir_ / "huge").string();
        std::ofstream(huge_).close();
        fs::resize_file(huge_, std::uintmax_t{1} << 30);
        // A profile that parses, for the flags read after it.
        profile_ = (dir_ / "profile.csv").string();
        std::ofstream(profile_) << "stage,instruction,frequency,time,energy\n"
                                   "0,forward,1410,0.010,2.0\n0,forward,1200,0.012,1.8\n0,forward,1000,0.014,1.7\n"
                                   "0,forward,800,0.018,1.6\n0,backward,1410,0.020,4.0\n0,backward,1200,0.024,3.6\n"
                                   "0,backward,1000,0.028,3.4\n0,backward,800,0.036,3.2\n";
    }
    void TearDown() override { fs::remove_all(dir_); }

    [[nodiscard]] std::vector<FileInput> inputs() const {
        const std::string zeus = zeus::testing::zeus_cli_path();
        const std::string solve = zeus + " perseus solve --p2p-power 50 --microbatches 2 --output-dir " +
                                  (dir_ / "out").string();
        return {
            {"power-limit report --profile", zeus + " power-limit report --profile {}"},
            {"power-limit report --log", zeus + " power-limit report --log {}"},
            {"power-limit simulate --trace", zeus + " power-limit simulate --all --trace {}"},
            {"perseus solve --profile", solve + " --profile {}"},
            {"perseus solve --cost-models", solve + " --profile " + profile_ + " --cost-models {}"},
            {"perseus-server --solution", zeus + " perseus-server --listen 127.0.0.1:0 --no-dump --solution {}"},
            {"energy --carbon-file", zeus + " energy --simulate --duration 0.1 --carbon-file {}"},
            {"energy --price-file", zeus + " energy --simulate --duration 0.1 --price-file {}"},
            {"run --carbon-file", zeus + " run --simulate --carbon-file {} -- true", 125},
            {"run --price-file", zeus + " run --simulate --price-file {} -- true", 125},
            {"bso simulate --train", zeus + " bso simulate --train {}"},
            {"bso simulate --power-trace",
             zeus + " bso simulate --train " + zeus::testing::data_dir() + "/summary_train.csv --power-trace {}"},
            {"zeus-sim work --trace",
             zeus::testing::zeus_sim_cli_path() + " work --gpu 0 --workload a/b --batch-size 1 --epochs 1 --trace {}",
             -2},
        };
    }

    [[nodiscard]] std::vector<PathCase> paths() const {
        return {
            {"a directory", dir_.string(), "is a directory, not a file"},
            {"a missing file", (dir_ / "no-such-file").string(), "does not exist"},
            {"a FIFO", fifo_, "is a FIFO (named pipe), not a regular file"},
            {"a 1 GiB file", huge_, "is 1.0 GiB, over the limit of 64.0 MiB"},
            {"an unreadable file", "/proc/self/mem", "cannot be read"},
        };
    }

    fs::path dir_;
    std::string fifo_, huge_, profile_;
};

TEST_F(UserFileInputs, EveryFileFlagNamesThePathAndItsProblem) {
    for (const auto& input : inputs()) {
        for (const auto& path : paths()) {
            // `timeout`: a reader that opens a FIFO blocking would wait forever.
            const auto r = capture_separately("timeout 20 " + with_path(input.command, path.path));
            const std::string what = input.name + " given " + path.name + ":\n" + r.err;
            if (input.bad_input_exit >= 0) {
                EXPECT_EQ(r.exit_code, input.bad_input_exit) << what;
            } else {
                EXPECT_NE(r.exit_code, 0) << what;  // zeus-sim: any failure
                EXPECT_NE(r.exit_code, 124) << what;
            }
            EXPECT_NE(r.err.find(path.path), std::string::npos) << what;
            EXPECT_NE(r.err.find(path.says), std::string::npos) << what;
            for (const char* bare : {"std::", "basic_ios", "bad_alloc", "terminate called", "is empty"}) {
                EXPECT_EQ(r.err.find(bare), std::string::npos) << bare << " in " << what;
            }
        }
    }
}

TEST_F(UserFileInputs, TheSimulatorConfigVariableNamesItsProblem) {
    for (const auto& path : paths()) {
        const auto r = capture_separately("ZEUS_SIM_CONFIG='" + path.path + "' timeout 20 " +
                                          zeus::testing::zeus_cli_path() + " show-env --simulate");
        EXPECT_NE(r.err.find(path.says), std::string::npos) << path.name << ":\n" << r.out << r.err;
        EXPECT_NE(r.err.find("ZEUS_SIM_CONFIG"), std::string::npos) << path.name << ":\n" << r.err;
    }
}

}  // namespace
}  // namespace zeus::testing
