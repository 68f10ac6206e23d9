// Text that is not UTF-8 (an argument, an environment variable, a file's
// name or contents) in every writer of the CLI (docs/cli.md, "Text that is
// not UTF-8"): a value only reported is written with U+FFFD in JSON and CSV
// and escaped for the terminal; a value that names something (a Pushgateway
// job, a label, a zone, a currency) is refused before anything runs. Before,
// nlohmann's type_error.316 aborted every JSON writer after the command had
// run (exit 134, -o left empty).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/build_paths.hpp"
#include "support/command_output.hpp"
#include "support/test_directory.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;

// Bytes a shell passes through inside single quotes: 0xFF is never UTF-8,
// ESC [2J clears a terminal, 0x07 rings its bell.
const std::string kNotUtf8 = "\xFF";
const std::string kReplacement = "\xEF\xBF\xBD";

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The document, or a test failure saying why it is not one.
nlohmann::json parse(const std::string& text, const std::string& what) {
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << what << " is not one JSON document:\n" << text;
    return doc;
}

class NonUtf8Inputs : public ::testing::Test {
  protected:
    // A simulated machine of the test's own, nothing from the caller's environment.
    [[nodiscard]] std::string zeus(const std::string& args, const std::string& env = "") const {
        return "env -u ZEUS_SIMULATE -u CUDA_VISIBLE_DEVICES -u HIP_VISIBLE_DEVICES -u ZEUSD_SOCK_PATH "
               "-u ZEUSD_HOST_PORT -u ZEUS_NVML_LIBRARY ZEUS_SIM_STATE=" +
               (dir_.path() / "state").string() + " " + env + " " + zeus_cli_path() + " " + args;
    }
    [[nodiscard]] fs::path path(const std::string& name) const { return dir_.path() / name; }

    TestDirectory dir_;
};

TEST_F(NonUtf8Inputs, RunJsonReportHasTheArgumentWithAReplacementCharacter) {
    const auto report = path("report.json");
    const auto r = capture_separately(
        zeus("run --simulate --cpus none --format json -o " + report.string() + " -- true 'a" + kNotUtf8 + "b'"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = parse(read_file(report), "-o report.json");
    ASSERT_TRUE(doc.contains("argv")) << doc;
    EXPECT_EQ(doc["argv"], nlohmann::json::array({"true", "a" + kReplacement + "b"}));

    // The same on standard output, as one document per line, and as a trace.
    const auto out = capture_separately(zeus("run --simulate --cpus none --format json --output - --trace " +
                                             path("trace.json").string() + " -- true " + kNotUtf8));
    ASSERT_EQ(out.exit_code, 0) << out.err;
    EXPECT_EQ(parse(out.out, "standard output")["argv"][1], kReplacement);
    (void)parse(read_file(path("trace.json")), "--trace");
}

TEST_F(NonUtf8Inputs, HumanCommandLineIsEscapedForTheTerminal) {
    const auto r = capture_separately(
        zeus("run --simulate --cpus none -- true '\x1b[2J' '" + kNotUtf8 + "' 'bell\x07' 'two\nlines' 'a\tb'"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string all = r.out + r.err;
    EXPECT_NE(all.find("Command:  true \\e[2J \\xff bell\\x07 two\\nlines 'a\\tb'\n"), std::string::npos) << all;
    EXPECT_EQ(all.find('\x1b'), std::string::npos) << all;
    EXPECT_EQ(all.find('\x07'), std::string::npos) << all;
    EXPECT_TRUE(is_utf8(all)) << all;
}

// A file's name and its contents are reported: replaced, never a crash.
TEST_F(NonUtf8Inputs, CarbonFileNameAndZoneColumnAreReplaced) {
    const auto file = path("intensity-" + kNotUtf8 + ".csv");
    std::ofstream(file) << "datetime,carbon_intensity,is_estimated,zone\n2020-01-01T00:00:00Z,300,false,Z" << kNotUtf8
                        << "\n";
    for (const std::string command : {"energy --duration 0.1", "run --cpus none --output -"}) {
        const auto r = capture_separately(zeus(command + " --simulate --format json --carbon-file '" + file.string() +
                                               "'" + (command.starts_with("run") ? " -- true" : "")));
        ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
        const auto doc = parse(r.out, command);
        ASSERT_TRUE(doc.contains("carbon")) << doc;
        EXPECT_EQ(doc["carbon"]["zone"], "Z" + kReplacement) << doc;
        EXPECT_NE(doc["carbon"]["provider"].get<std::string>().find("intensity-" + kReplacement + ".csv"),
                  std::string::npos)
            << doc;
        const auto human = capture_separately(zeus(command + " --simulate --carbon-file '" + file.string() + "'" +
                                                   (command.starts_with("run") ? " -- true" : "")));
        EXPECT_EQ(human.exit_code, 0) << human.err;
        EXPECT_TRUE(is_utf8(human.out + human.err)) << human.out << human.err;
    }
}

// A name is refused while the options are read: the command never runs and
// nothing is written.
TEST_F(NonUtf8Inputs, NamesAreRefusedBeforeAnythingRuns) {
    const auto marker = path("ran");
    const struct {
        std::string options;
        std::string option;
    } cases[] = {
        {"--carbon-intensity 300 --carbon-zone 'DE" + kNotUtf8 + "'", "--carbon-zone"},
        {"--price 0.3 --currency 'EU" + kNotUtf8 + "'", "--currency"},
        {"--push-gateway http://127.0.0.1:9 --job 'train" + kNotUtf8 + "'", "--job"},
        {"--price-openei 'r" + kNotUtf8 + "' --price-location 42.28,-83.74", "--price-openei"},
    };
    for (const auto& c : cases) {
        auto r = capture_separately(zeus("run --simulate --cpus none --format json -o " + path("out.json").string() +
                                         " " + c.options + " -- touch " + marker.string()));
        EXPECT_EQ(r.exit_code, 125) << c.option << ": " << r.err;
        EXPECT_NE(r.err.find(c.option), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("is not UTF-8 (byte 0xff at offset"), std::string::npos) << r.err;
        EXPECT_TRUE(is_utf8(r.err)) << r.err;
        EXPECT_FALSE(fs::exists(marker)) << c.option << ": the command ran";
        EXPECT_FALSE(fs::exists(path("out.json"))) << c.option;
        if (c.option == "--job") continue;  // zeus run's alone
        r = capture_separately(zeus("energy --simulate --duration 0.1 " + c.options));
        EXPECT_EQ(r.exit_code, 2) << c.option << ": " << r.err;
        EXPECT_NE(r.err.find("is not UTF-8"), std::string::npos) << r.err;
    }
    // Before, the exporter started and served scrapes nobody could parse: stopped after 10 s.
    const auto exporter = capture_separately(
        "timeout 10 " + zeus("exporter --simulate --listen 127.0.0.1:0 --hostname 'h" + kNotUtf8 + "'"));
    EXPECT_EQ(exporter.exit_code, 2) << exporter.err;
    EXPECT_NE(exporter.err.find("--hostname: 'h\\xff' is not UTF-8 (byte 0xff at offset 1)"), std::string::npos)
        << exporter.err;
}

// Environment variables show-env reports: valid JSON whatever they hold.
TEST_F(NonUtf8Inputs, ShowEnvJsonReportsEnvironmentVariables) {
    for (const std::string variable :
         {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZEUSD_SOCK_PATH", "ZEUS_POWERCAP_ROOT"}) {
        const auto r = capture_separately(
            zeus("show-env --simulate --format json", variable + "='" + path("x" + kNotUtf8).string() + "'"));
        EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2)
            << variable << ": " << r.exit_code << r.err;
        if (!r.out.empty()) (void)parse(r.out, variable);
        EXPECT_TRUE(is_utf8(r.out)) << variable;
        EXPECT_TRUE(is_utf8(r.err)) << variable << ": " << r.err;
        const auto human =
            capture_separately(zeus("show-env --simulate", variable + "='" + path("x" + kNotUtf8).string() + "'"));
        EXPECT_TRUE(is_utf8(human.out + human.err)) << variable << ": " << human.out << human.err;
    }
}

// An error that quotes what the user gave is escaped, not raw.
TEST_F(NonUtf8Inputs, ErrorsQuoteTheValueEscaped) {
    const auto r = capture_separately(
        zeus("energy --simulate --duration 0.1 --carbon-file '" + path("missing\x1b[2J" + kNotUtf8).string() + "'"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("missing\\e[2J\\xff"), std::string::npos) << r.err;
    EXPECT_TRUE(is_utf8(r.err)) << r.err;
    const auto unknown = capture_separately(zeus("energy --simulate --bogus-\x1b[2J"));
    EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
    EXPECT_EQ(unknown.err.find('\x1b'), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace zeus::testing
