// `zeus profile`: option validation, JSON and SVG output and the progress
// line as unit tests (hand-built reports; expectations follow from the
// inputs), and the command end to end on the GPU simulator, with a real
// command and with the built-in simulated work.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "profile_options.hpp"
#include "support/command_output.hpp"
#include "profile_output.hpp"
#include "support/build_paths.hpp"

namespace zeus::cli {
namespace {

namespace fs = std::filesystem;

ProfileOptions with_command() {
    ProfileOptions o;
    o.command = {"true"};
    return o;
}

void expect_error(const ProfileOptions& o, const std::string& names, const std::string& hint_has) {
    auto p = plan_profile(o);
    ASSERT_FALSE(p.ok()) << "accepted: " << names;
    EXPECT_EQ(p.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(p.error().message.find(names), std::string::npos) << p.error().message;
    EXPECT_NE(p.error().hint.find(hint_has), std::string::npos) << p.error().hint;
}

TEST(ProfileOptions, DefaultsAreTheOriginals) {
    const ProfilePlan p = plan_profile(with_command()).value();
    EXPECT_EQ(p.mode, ProfileMode::Parameters);
    EXPECT_EQ(p.format, ProfileFormat::Human);
    const std::vector<double> range{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    EXPECT_EQ(p.measurement_range, range);
    EXPECT_EQ(p.cooldown_range, range);
    EXPECT_EQ(p.measurement_duration, 10.0);
    EXPECT_EQ(p.cooldown_duration, 10.0);
    EXPECT_EQ(p.trials, 10U);
    EXPECT_EQ(p.warmup_trials, 2U);
    EXPECT_EQ(p.threshold, 0.01);
    EXPECT_EQ(p.warmup_iterations, 10U);
    EXPECT_EQ(p.calibration_iterations, 100U);
    EXPECT_FALSE(p.iteration_duration.has_value());
}

// The README's example must finish in about a minute (the defaults plan most of an hour).
TEST(ProfileOptions, ReadmeExampleFinishesInAboutAMinute) {
    std::ifstream readme(zeus::testing::source_dir() + "/README.md");
    std::string line;
    while (std::getline(readme, line) && line.find("zeus profile --simulated-work") == std::string::npos) {
    }
    ASSERT_NE(line.find("zeus profile --simulated-work"), std::string::npos) << "README has no profile example";
    std::stringstream words(line.substr(line.find("zeus profile") + 12));
    ProfileOptions o;
    for (std::string flag, value; words >> flag && flag != "#" && words >> value;) {
        if (flag == "--simulated-work") o.simulated_work = std::stod(value);
        else if (flag == "--measurement-range") o.measurement_range = value;
        else if (flag == "--cooldown-range") o.cooldown_range = value;
        else if (flag == "--trials") o.trials = std::stoll(value);
        else if (flag == "--warmup-trials") o.warmup_trials = std::stoll(value);
        else if (flag == "--threshold") o.threshold = std::stod(value);
        else FAIL() << "the test does not know " << flag;
    }
    auto plan = plan_profile(o);
    ASSERT_TRUE(plan.ok()) << plan.error().describe();
    const PlannedWork work = planned_work(*plan);
    // Plus calibration and each trial's warm-up iterations, one simulated work unit each.
    const double total = work.seconds + *o.simulated_work * static_cast<double>(plan->calibration_iterations +
                                                                                work.trials * plan->warmup_iterations);
    EXPECT_GE(total, 30.0);
    EXPECT_LE(total, 90.0);
    ProfileOptions original;
    original.simulated_work = 0.2;
    auto defaults = plan_profile(original);
    ASSERT_TRUE(defaults.ok());
    EXPECT_GT(planned_work(*defaults).seconds, 45 * 60.0);
}

TEST(ProfileOptions, ValuesAreTakenAsGiven) {
    ProfileOptions o = with_command();
    o.mode = "cooldown";
    o.cooldown_range = " 0, 0.5 ,2";
    o.measurement_duration = 3.5;
    o.trials = 4;
    o.warmup_trials = 0;
    o.format = "json";
    const ProfilePlan p = plan_profile(o).value();
    EXPECT_EQ(p.mode, ProfileMode::Cooldown);
    EXPECT_EQ(p.format, ProfileFormat::Json);
    EXPECT_EQ(p.cooldown_range, (std::vector<double>{0, 0.5, 2}));
    EXPECT_EQ(p.measurement_duration, 3.5);
    EXPECT_EQ(p.trials, 4U);
    EXPECT_EQ(p.warmup_trials, 0U);
}

TEST(ProfileOptions, BadInputNamesTheProblemAndTheFix) {
    ProfileOptions o;
    expect_error(o, "nothing to profile", "after --");
    o = with_command();
    o.simulated_work = 0.1;
    expect_error(o, "both a command and --simulated-work", "either");
    o = with_command();
    o.trials = 0;
    expect_error(o, "--trials 0: must be at least 1", "standard deviation");
    o = with_command();
    o.measurement_range = "1,x";
    expect_error(o, "--measurement-range 1,x: 'x' is not a number", "comma-separated");
    o = with_command();
    o.measurement_range = "0,1";
    expect_error(o, "--measurement-range: 0 s is out of range", "comma-separated");
    o = with_command();
    o.cooldown_range = "1,-2";
    expect_error(o, "--cooldown-range: -2 s is out of range", "comma-separated");
    o = with_command();
    o.cooldown_range = "1,,2";
    expect_error(o, "'' is not a number", "comma-separated");
    o = with_command();
    o.format = "csv";
    expect_error(o, "--format csv", "human or json");
    o = with_command();
    o.mode = "fast";
    expect_error(o, "--mode fast", "parameters, measurement, cooldown or measure");
    o = with_command();
    o.mode = "measure";
    o.measurement_duration = 5;
    expect_error(o, "needs both --measurement-duration and --cooldown-duration", "--mode parameters");
    o.cooldown_duration = 2;
    o.plot = "x.svg";
    expect_error(o, "--plot", "--mode parameters");
    o = with_command();
    o.threshold = 0;
    expect_error(o, "--threshold 0", "e.g. 0.01");
    o = with_command();
    o.calibration_iterations = 0;
    expect_error(o, "--calibration-iterations 0", "at least one");
    o = ProfileOptions{};
    o.simulated_work = 0.1;
    o.simulated_util = 1.5;
    expect_error(o, "--simulated-util 1.5", "fraction");
}

profile::SweepResult entry(double cooldown, double mean, double stddev, bool valid) {
    profile::SweepResult e;
    e.measurement_duration = 2.0;
    e.cooldown_duration = cooldown;
    e.energy_mean = mean;
    e.energy_std = stddev;
    e.is_valid = valid;
    e.avg_temperature_before = 40.0;
    e.avg_temperature_after = 50.0;
    profile::TrialResult t;
    t.energy_per_iter = mean;
    t.iterations = 7;
    e.trials = {t};
    return e;
}

profile::SweepReport cooldown_report() {
    profile::SweepReport r;
    r.sweep_param = {"cooldown_duration", {0.0, 1.0, 4.0}};
    r.fixed_param = {"measurement_duration", 2.0};
    r.entries = {entry(0.0, 12.0, 1.0, false), entry(1.0, 10.0, 0.5, false), entry(4.0, 9.0, 0.005, true)};
    return r;
}

struct Circle {
    double cx = 0;
    double cy = 0;
    bool filled = false;
};

TEST(ProfileOutput, SvgPlotsMeanAndStdPerSweptValue) {
    const std::string svg = render_svg({cooldown_report()}, 0.01);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0U);
    EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_NE(svg.find("cooldown_duration (fixed measurement_duration=2.0 s)"), std::string::npos);

    std::vector<Circle> circles;
    const std::regex circle_re(R"re(<circle class="mean" cx="([0-9.]+)" cy="([0-9.]+)" r="4" fill="([^"]+)")re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle_re); it != std::sregex_iterator(); ++it) {
        circles.push_back({std::stod((*it)[1]), std::stod((*it)[2]), (*it)[3] != "white"});
    }
    std::vector<double> bar_lengths;
    const std::regex line_re(R"re(<line class="std" x1="[0-9.]+" y1="([0-9.]+)" x2="[0-9.]+" y2="([0-9.]+)")re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line_re); it != std::sregex_iterator(); ++it) {
        bar_lengths.push_back(std::stod((*it)[2]) - std::stod((*it)[1]));
    }
    ASSERT_EQ(circles.size(), 3U);
    ASSERT_EQ(bar_lengths.size(), 3U);
    // x grows with the cool-down, linearly: 0, 1, 4 s.
    EXPECT_NEAR((circles[1].cx - circles[0].cx) * 4.0, circles[2].cx - circles[0].cx, 0.05);
    // y grows downwards in SVG: a larger mean is higher up, linearly (12, 10, 9 J).
    EXPECT_NEAR((circles[1].cy - circles[0].cy) * 3.0, (circles[2].cy - circles[0].cy) * 2.0, 0.05);
    EXPECT_LT(circles[0].cy, circles[2].cy);
    // Bars span ± std, on the same scale: 2 : 1 : 0.01.
    EXPECT_NEAR(bar_lengths[0], 2.0 * bar_lengths[1], 0.05);
    EXPECT_NEAR(bar_lengths[2] / bar_lengths[0], 0.005, 0.001);
    // Bar length = 2 std in pixels per joule; mean difference 2 J = one bar of entry 0.
    EXPECT_NEAR(circles[1].cy - circles[0].cy, bar_lengths[0], 0.05);
    // VALID filled, INVALID hollow.
    EXPECT_FALSE(circles[0].filled);
    EXPECT_FALSE(circles[1].filled);
    EXPECT_TRUE(circles[2].filled);
}

TEST(ProfileOutput, SvgHasOnePanelPerReport) {
    profile::SweepReport m = cooldown_report();
    m.sweep_param.first = "measurement_duration";
    const std::string svg = render_svg({m, cooldown_report()}, 0.01);
    std::size_t panels = 0;
    for (std::size_t at = svg.find("class=\"panel\""); at != std::string::npos; at = svg.find("class=\"panel\"", at + 1)) {
        ++panels;
    }
    EXPECT_EQ(panels, 2U);
    EXPECT_NE(svg.find("width=\"960\""), std::string::npos);  // two 480-pixel panels
}

TEST(ProfileOutput, JsonCarriesEveryField) {
    profile::Recommendation rec;
    rec.measurement_duration = 2.0;
    rec.cooldown_duration = 4.0;
    rec.wall_time_per_measurement = 6.5;
    const auto j = reports_json({cooldown_report()}, rec, 0.01, true);
    ASSERT_EQ(j["reports"].size(), 1U);
    const auto& r = j["reports"][0];
    EXPECT_EQ(r["sweep_param"]["name"], "cooldown_duration");
    EXPECT_EQ(r["sweep_param"]["values"], (std::vector<double>{0.0, 1.0, 4.0}));
    EXPECT_EQ(r["fixed_param"]["name"], "measurement_duration");
    EXPECT_EQ(r["fixed_param"]["value"], 2.0);
    ASSERT_EQ(r["entries"].size(), 3U);
    EXPECT_EQ(r["entries"][1]["energy_mean"], 10.0);
    EXPECT_EQ(r["entries"][1]["energy_std"], 0.5);
    EXPECT_EQ(r["entries"][2]["is_valid"], true);
    EXPECT_EQ(r["entries"][2]["cooldown_duration"], 4.0);
    EXPECT_EQ(r["entries"][0]["trials"][0]["iterations"], 7);
    EXPECT_EQ(j["recommendation"]["cooldown_duration"], 4.0);
    EXPECT_EQ(j["recommendation"]["wall_time_per_measurement"], 6.5);
    EXPECT_EQ(j["trial_stddev_threshold"], 0.01);
    EXPECT_EQ(j["simulated"], true);
    EXPECT_TRUE(reports_json({}, std::nullopt, 0.01, false)["recommendation"].is_null());
}

TEST(ProfileOutput, ProgressLineShowsCountsElapsedAndEta) {
    EXPECT_EQ(clock_text(0), "0:00");
    EXPECT_EQ(clock_text(65), "1:05");
    EXPECT_EQ(clock_text(3723), "1:02:03");
    profile::ProgressEvent e;
    e.message = "Trial 3/10 done";
    e.trials_done = 7;
    e.trials_total = 41;
    e.elapsed_s = 12;
    e.remaining_s = 65;
    EXPECT_EQ(progress_line(e), "[ 7/41] Trial 3/10 done  elapsed 0:12  ETA 1:05");
}

TEST(ProfileOutput, ProgressBeforeThePlanShowsNoCountAndNoEta) {
    profile::ProgressEvent e;
    e.message = "Calibrating the iteration duration";
    e.elapsed_s = 1;
    EXPECT_EQ(progress_line(e), "[...] Calibrating the iteration duration  elapsed 0:01");
}

// ------------------------------------------------------------- end to end

struct Finished {
    int exit_code = -1;
    std::string output;  // stdout and stderr together
};

Finished run(const std::string& command) {
    Finished r;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return r;
    std::array<char, 4096> buffer{};
    while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) r.output += buffer.data();
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class ProfileCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("zeus-profile-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        // One simulated A100 with a short thermal time constant.
        std::ofstream(dir_ / "sim.json")
            << R"({"clock": "real", "gpus": [{"model": "A100-SXM4-40GB", "thermal": {"time_constant_s": 0.5}}]})";
        env_ = "env -u ZEUS_SIMULATE -u CUDA_VISIBLE_DEVICES -u ZEUS_NVML_LIBRARY ZEUS_SIM_STATE=" +
               (dir_ / "state").string() + " ZEUS_SIM_CONFIG=" + (dir_ / "sim.json").string() + " ";
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    [[nodiscard]] std::string zeus(const std::string& args) const {
        return env_ + zeus::testing::zeus_cli_path() + " profile " + args;
    }

    fs::path dir_;
    std::string env_;
};

TEST_F(ProfileCommand, SimulatedWorkJsonAndPlot) {
    const fs::path svg = dir_ / "plot.svg";
    // Standard output holds the report alone; the plan goes to standard error.
    const auto r = ::zeus::testing::capture_separately(
        zeus("--simulated-work 0.02 --mode cooldown --cooldown-range 0,0.2 --measurement-duration 0.1 "
             "--trials 2 --warmup-trials 1 --warmup-iterations 1 --calibration-iterations 2 "
             "--format json --plot " + svg.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Not a terminal: no progress line.
    EXPECT_EQ(r.err.find("ETA"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("zeus: profile: planned: 5 trials"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["simulated"], true);
    ASSERT_EQ(j["reports"].size(), 1U);
    const auto& report = j["reports"][0];
    EXPECT_EQ(report["sweep_param"]["name"], "cooldown_duration");
    EXPECT_EQ(report["fixed_param"]["value"], 0.1);
    ASSERT_EQ(report["entries"].size(), 2U);
    for (const auto& e : report["entries"]) {
        ASSERT_EQ(e["trials"].size(), 2U);
        for (const auto& t : e["trials"]) {
            // At least 20 ms of full load on an A100 (55 W idle + 330 W
            // dynamic, more when warmer; 30 % off for the energy counter's
            // 100 ms steps over a 0.1 s window), and at most its wall time
            // at full power (idle gaps between runs, when the machine is
            // busy, cost idle power only).
            const double joules = t["energy_per_iter"].get<double>();
            EXPECT_GT(joules, 0.02 * 385 * 0.7);
            EXPECT_LT(joules, t["time_per_iter"].get<double>() * 430 * 1.3);
        }
    }
    const std::string plot = read_file(svg);
    EXPECT_NE(plot.find("<svg"), std::string::npos);
    std::size_t circles = 0;
    for (std::size_t at = plot.find("<circle"); at != std::string::npos; at = plot.find("<circle", at + 1)) ++circles;
    EXPECT_EQ(circles, 2U);
}

TEST_F(ProfileCommand, OneIterationIsOneRunOfTheCommand) {
    const fs::path calls = dir_ / "calls";
    const auto r = ::zeus::testing::capture_separately(zeus("--simulate --mode measurement --measurement-range 0.05,0.1 --cooldown-duration 0 "
                            "--trials 2 --warmup-trials 1 --warmup-iterations 1 --calibration-iterations 3 "
                            "--format json --output - -- /bin/sh -c 'echo x >> " + calls.string() + "'"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    const auto& entries = j["reports"][0]["entries"];
    ASSERT_EQ(entries.size(), 2U);
    // Calibration: 1 warm-up + 3 timed runs. The warm-up trial runs the
    // longest window's iterations (the trials of the 0.1 s entry have the
    // same count) without warm-up iterations; every trial adds 1 warm-up run.
    std::size_t expected = 1 + 3 + entries[1]["trials"][0]["iterations"].get<std::size_t>();
    for (const auto& e : entries) {
        for (const auto& t : e["trials"]) expected += 1 + t["iterations"].get<std::size_t>();
    }
    const std::string lines = read_file(calls);
    EXPECT_EQ(static_cast<std::size_t>(std::count(lines.begin(), lines.end(), '\n')), expected);
}

TEST_F(ProfileCommand, HumanReportThenRecommendation) {
    const auto r = run(zeus("--simulated-work 0.01 --measurement-range 0.1,0.2 --cooldown-range 0,0.1 --trials 2 "
                            "--warmup-trials 0 --warmup-iterations 1 --calibration-iterations 2 --threshold 1000"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto m = r.output.find("Sweep measurement_duration (fixed cooldown_duration=0.1 s):\n"
                                 "  measurement_duration=0.1 s  mean=");
    const auto c = r.output.find("Sweep cooldown_duration (fixed measurement_duration=0.2 s):\n"
                                 "  cooldown_duration=0.0 s  mean=");
    // Every value is VALID under a 1000 J threshold: the shortest of each range.
    const auto rec = r.output.find("Recommended: measurement_duration=0.1 s, cooldown_duration=0.0 s; one measurement "
                                   "takes ");
    ASSERT_NE(m, std::string::npos) << r.output;
    ASSERT_NE(c, std::string::npos) << r.output;
    ASSERT_NE(rec, std::string::npos) << r.output;
    EXPECT_LT(m, c);
    EXPECT_LT(c, rec);
    EXPECT_EQ(r.output.find("[INVALID]"), std::string::npos) << r.output;
}

TEST_F(ProfileCommand, FailingCommandStopsWithItsExitCode) {
    const auto r = run(zeus("--simulate --calibration-iterations 2 -- /bin/sh -c 'exit 3'"));
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("zeus: profile: the command exited with code 3"), std::string::npos) << r.output;
}

TEST_F(ProfileCommand, BadInputExitsWith2) {
    auto r = run(zeus("--simulate --trials 0 -- true"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--trials: 0 is out of range; give a whole number from 1 to 1000000"), std::string::npos)
        << r.output;
    r = run(zeus("--simulate"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("nothing to profile"), std::string::npos) << r.output;
    r = run(zeus("--simulate --bogus -- true"));
    EXPECT_NE(r.exit_code, 0) << r.output;
    r = run(zeus("--simulated-work 0.01 --plot /nonexistent-dir/p.svg"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--plot"), std::string::npos) << r.output;
}

// Window edges: sampled by default, synchronous by name; anything else is
// refused with the choices. Both measure the same simulated work: at least
// its full load for 20 ms per iteration (as in SimulatedWorkJsonAndPlot).
TEST_F(ProfileCommand, WindowEdgesSampledByDefaultSynchronousByName) {
    for (const std::string edges : {"", "--window-edges sampled ", "--window-edges synchronous "}) {
        SCOPED_TRACE(edges);
        const auto r = ::zeus::testing::capture_separately(
            zeus(edges + "--simulated-work 0.02 --mode measure --measurement-duration 0.2 --cooldown-duration 0 "
                         "--warmup-iterations 1 --calibration-iterations 2 --format json"));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out, nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << r.out;
        // At least 20 ms of full load on an A100 per iteration, at most its
        // wall time at full power (SimulatedWorkJsonAndPlot's bounds).
        const double joules = j["trial"]["energy_per_iter"].get<double>();
        EXPECT_GT(joules, 0.02 * 385 * 0.7);
        EXPECT_LT(joules, j["trial"]["time_per_iter"].get<double>() * 430 * 1.3);
    }
    const auto r = run(zeus("--window-edges lazy --simulated-work 0.02"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--window-edges: 'lazy' is not one of sampled, synchronous"), std::string::npos)
        << r.output;
}

// Progress goes to a terminal only: `script` gives zeus a pseudo-terminal.
TEST_F(ProfileCommand, ProgressWithEtaOnATerminalUnlessQuiet) {
    if (std::system("command -v script > /dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) is not installed";
    const std::string args = "--simulated-work 0.01 --mode measurement --measurement-range 0.05 --cooldown-duration 0 "
                             "--trials 2 --warmup-trials 0 --warmup-iterations 0 --calibration-iterations 2";
    auto r = run("script -qec \"" + zeus(args) + "\" /dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("ETA"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[2/2] Trial 2/2 done"), std::string::npos) << r.output;
    r = run("script -qec \"" + zeus(args + " --quiet") + "\" /dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("ETA"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace zeus::cli
