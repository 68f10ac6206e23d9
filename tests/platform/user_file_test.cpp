// The one reader of users' files (src/platform/user_file.hpp): each problem a
// path can have is named, and nothing over the limit is read.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "zeus/platform/read_user_file.hpp"
#include "zeus/platform/user_file.hpp"

namespace zeus {
namespace {

namespace fs = std::filesystem;

class UserFile : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("zeus-user-file-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string write(const std::string& name, const std::string& text) {
        const auto path = dir_ / name;
        std::ofstream(path) << text;
        return path.string();
    }
    fs::path dir_;
};

TEST_F(UserFile, ARegularFileIsReadWhole) {
    const auto file = read_user_file_text(write("a.csv", "x,y\n1,2\n"));
    ASSERT_TRUE(file.ok()) << file.detail;
    EXPECT_EQ(file.text, "x,y\n1,2\n");
    const auto empty = read_user_file_text(write("empty.csv", ""));
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty.text, "");
}

TEST_F(UserFile, EachProblemIsNamed) {
    const auto missing = read_user_file_text((dir_ / "no-such.csv").string());
    EXPECT_EQ(missing.problem, UserFileProblem::Missing);
    EXPECT_EQ(missing.detail, "does not exist");
    const auto below_a_file = read_user_file_text(write("f", "x") + "/inside");
    EXPECT_EQ(below_a_file.problem, UserFileProblem::Missing);
    EXPECT_EQ(read_user_file_text("").problem, UserFileProblem::Missing);

    const auto directory = read_user_file_text(dir_.string());
    EXPECT_EQ(directory.problem, UserFileProblem::Directory);
    EXPECT_EQ(directory.detail, "is a directory, not a file");

    const auto device = read_user_file_text("/dev/null");
    EXPECT_EQ(device.problem, UserFileProblem::NotRegular);
    EXPECT_EQ(device.detail, "is a device, not a regular file");
}

TEST_F(UserFile, AFifoIsRefusedWithoutWaitingForAWriter) {
    const auto fifo = (dir_ / "pipe").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto started = std::chrono::steady_clock::now();
    const auto file = read_user_file_text(fifo);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
    EXPECT_EQ(file.problem, UserFileProblem::NotRegular);
    EXPECT_EQ(file.detail, "is a FIFO (named pipe), not a regular file");
}

TEST_F(UserFile, AnUnreadableFileSaysWhy) {
    // Root opens any file whatever its mode; reading /proc/self/mem at
    // offset 0 fails for everyone (EIO), after a successful open.
    const auto mem = read_user_file_text("/proc/self/mem");
    EXPECT_EQ(mem.problem, UserFileProblem::Unreadable);
    EXPECT_EQ(mem.detail.rfind("cannot be read: ", 0), 0U) << mem.detail;
    if (::geteuid() == 0) return;
    const auto locked = write("locked", "secret");
    ASSERT_EQ(::chmod(locked.c_str(), 0), 0);
    const auto file = read_user_file_text(locked);
    EXPECT_EQ(file.problem, UserFileProblem::Unreadable);
    EXPECT_EQ(file.detail, "cannot be opened: Permission denied");
}

TEST_F(UserFile, AFileOverTheLimitIsRefusedBeforeReading) {
    // 1 GiB of holes: reading it whole would take a second and a gigabyte.
    const auto huge = dir_ / "huge.json";
    std::ofstream(huge).close();
    fs::resize_file(huge, std::uintmax_t{1} << 30);
    const auto file = read_user_file_text(huge.string());
    EXPECT_EQ(file.problem, UserFileProblem::TooLarge);
    // The size comes from stat(), before any read.
    EXPECT_EQ(file.detail, "is 1.0 GiB, over the limit of 64.0 MiB for this input (a wrong path?)");
    EXPECT_TRUE(file.text.empty());

    const auto small = read_user_file_text(write("eleven", "0123456789\n"), 10);
    EXPECT_EQ(small.problem, UserFileProblem::TooLarge);
    EXPECT_TRUE(read_user_file_text(write("ten", "012345678\n"), 10).ok());
}

TEST_F(UserFile, AFileLongerThanItsSizeSaidIsStoppedAtTheLimit) {
    // /proc files report size 0: the limit holds while reading too.
    const auto file = read_user_file_text("/proc/self/maps", 16);
    EXPECT_EQ(file.problem, UserFileProblem::TooLarge);
    EXPECT_EQ(file.detail, "is longer than the limit of 16 bytes for this input (a wrong path?)");
}

TEST_F(UserFile, LibzeusTextHasNoByteOrderMark) {
    // JSON parsers refuse a byte-order mark; Windows editors write one.
    const auto text = read_user_file(write("bom.json", "\xEF\xBB\xBF[1]"), {"solution file", "--solution"});
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, "[1]");
    // The core keeps the bytes as they are (a signing key is binary).
    EXPECT_EQ(read_user_file_text((dir_ / "bom.json").string()).text, "\xEF\xBB\xBF[1]");
}

TEST_F(UserFile, LibzeusErrorsNameTheInputThePathTheProblemAndTheFlag) {
    const auto dir = dir_.string();
    const auto result = read_user_file(dir, {"power-limit profile", "--profile"});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(result.error().message, "cannot use the power-limit profile '" + dir + "': it is a directory, not a file");
    EXPECT_NE(result.error().hint.find("--profile"), std::string::npos) << result.error().hint;

    const auto missing = read_user_file(dir + "/x.csv", {"price file", "--price-file"});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_EQ(missing.error().hint, "check the path given to --price-file");
}

}  // namespace
}  // namespace zeus
