// The carbon-aware power-limit selector on the measured A40 traces
// (data/power-traces) under the recorded ElectricityMaps day (data/carbon):
// its choice is the argmin of the formula computed here, it moves towards
// less energy as the grid gets dirtier, and it re-selects only past the threshold.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "replay_server.hpp"
#include "zeus/carbon/carbon_aware_power_limit.hpp"
#include "zeus/carbon/intensity_provider.hpp"
#include "support/build_paths.hpp"

namespace zeus::carbon {
namespace {

using optimizer::PowerLimitMeasurement;

// One workload's profile from the trace: energy = time_per_epoch × average_power.
std::vector<PowerLimitMeasurement> trace_profile(const std::string& workload, const std::string& batch,
                                                 const std::string& optimizer) {
    std::ifstream in(zeus::testing::data_dir() + "/power-traces/summary_power_a40.csv");
    std::string line;
    std::getline(in, line);
    std::vector<PowerLimitMeasurement> profile;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::istringstream cells(line);
        for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
        if (f[0] + "/" + f[1] != workload || f[2] != batch || f[3] != optimizer) continue;
        const double limit = std::stod(f[4]);
        const double time = std::stod(f[5]);
        profile.push_back({Milliwatts(static_cast<std::int64_t>(limit * 1000)), Joules(time * std::stod(f[6])),
                           Seconds(time)});
    }
    std::sort(profile.begin(), profile.end(),
              [](const auto& a, const auto& b) { return a.power_limit > b.power_limit; });  // profiling order
    return profile;
}

std::vector<double> recorded_day() {
    std::vector<double> day;
    const auto recorded = testing::read_json(testing::data_file("carbon_history_file1.json"));
    for (const auto& e : recorded["history"]) {
        day.push_back(e["carbonIntensity"].get<double>());
    }
    return day;
}

// The formula, by brute force: argmin eta·E·I/ref + (1−eta)·MaxPower·T, first on ties.
const PowerLimitMeasurement& expected_choice(const std::vector<PowerLimitMeasurement>& profile, double eta, double i,
                                             double ref) {
    double max_w = 0;
    for (const auto& m : profile) max_w = std::max(max_w, m.power_limit.count() / 1000.0);
    const PowerLimitMeasurement* best = nullptr;
    double best_cost = 0;
    for (const auto& m : profile) {
        const double cost = eta * m.energy.count() * i / ref + (1 - eta) * max_w * m.time.count();
        if (best == nullptr || cost < best_cost) {
            best = &m;
            best_cost = cost;
        }
    }
    return *best;
}

struct Workload {
    const char* name;
    const char* batch;
    const char* optimizer;
};
constexpr Workload kWorkloads[] = {
    {"cifar100/shufflenetv2", "1024", "adadelta"}, {"imagenet/resnet50", "128", "adadelta"},
    {"librispeech/deepspeech2", "128", "adamw"},   {"movielens-1m/ncf", "1024", "adam"},
    {"squad/bert_base_uncased", "12", "adamw"},    {"sentiment140/bert_base_uncased", "128", "adamw"},
};

TEST(CarbonAwarePowerLimit, FollowsTheFormulaOverTheRecordedDayForEveryTracedWorkload) {
    const auto day = recorded_day();
    ASSERT_EQ(day.size(), 24U);
    double ref = 0;
    for (double i : day) ref += i / static_cast<double>(day.size());
    for (const double eta : {0.3, 0.5, 0.7}) {
        for (const auto& w : kWorkloads) {
            const auto profile = trace_profile(w.name, w.batch, w.optimizer);
            ASSERT_GE(profile.size(), 5U) << w.name;
            // Threshold 0: re-selected every hour, so each hour's choice is that hour's argmin.
            auto tuner = CarbonAwarePowerLimit::create(profile, {eta, ref, 0.0, std::nullopt}).value();
            for (const double i : day) {
                const auto d = tuner.update(i).value();
                EXPECT_EQ(d.power_limit, expected_choice(profile, eta, i, ref).power_limit) << w.name << " at " << i;
            }
            // At the reference it is ZeusCost's choice.
            auto at_ref = CarbonAwarePowerLimit::create(profile, {eta, ref, 0.1, std::nullopt}).value().update(ref);
            EXPECT_EQ(at_ref.value().power_limit, optimizer::zeus_cost(eta).value()->select(profile, {}).value())
                << w.name;
        }
    }
}

TEST(CarbonAwarePowerLimit, ADirtierGridNeverChoosesMoreEnergy) {
    for (const auto& w : kWorkloads) {
        const auto profile = trace_profile(w.name, w.batch, w.optimizer);
        double last_energy = INFINITY;
        double last_time = 0;
        for (double i = 50; i <= 1500; i += 25) {
            auto tuner = CarbonAwarePowerLimit::create(profile, {0.5, 460, 0.0, std::nullopt}).value();
            const auto limit = tuner.update(i).value().power_limit;
            const auto& m = *std::find_if(profile.begin(), profile.end(),
                                          [&](const auto& p) { return p.power_limit == limit; });
            EXPECT_LE(m.energy.count(), last_energy) << w.name << " at " << i;
            EXPECT_GE(m.time.count(), last_time) << w.name << " at " << i;
            last_energy = m.energy.count();
            last_time = m.time.count();
        }
    }
}

TEST(CarbonAwarePowerLimit, ReselectsOnlyWhenTheIntensityMovedPastTheThreshold) {
    const auto profile = trace_profile("sentiment140/bert_base_uncased", "128", "adamw");
    auto tuner = CarbonAwarePowerLimit::create(profile, {0.3, 460, 0.1, std::nullopt}).value();
    const auto first = tuner.update(460).value();
    EXPECT_TRUE(first.reevaluated);
    EXPECT_TRUE(first.changed);
    const auto small = tuner.update(500).value();  // +8.7%
    EXPECT_FALSE(small.reevaluated);
    EXPECT_EQ(small.power_limit, first.power_limit);
    EXPECT_DOUBLE_EQ(small.chosen_at_g_per_kwh, 460);
    const auto big = tuner.update(530).value();  // +15.2% of the 460 it was chosen at
    EXPECT_TRUE(big.reevaluated);
    EXPECT_EQ(big.power_limit, expected_choice(profile, 0.3, 530, 460).power_limit);
    EXPECT_EQ(big.changed, big.power_limit != first.power_limit);
}

TEST(CarbonAwarePowerLimit, BadInputIsRefused) {
    const auto profile = trace_profile("cifar100/shufflenetv2", "1024", "adadelta");
    EXPECT_FALSE(CarbonAwarePowerLimit::create({}, {0.5, 460, 0.1, std::nullopt}).ok());
    EXPECT_FALSE(CarbonAwarePowerLimit::create(profile, {0.5, 0, 0.1, std::nullopt}).ok());
    EXPECT_FALSE(CarbonAwarePowerLimit::create(profile, {1.5, 460, 0.1, std::nullopt}).ok());
    EXPECT_FALSE(CarbonAwarePowerLimit::create(profile, {0.5, 460, -1, std::nullopt}).ok());
    auto tuner = CarbonAwarePowerLimit::create(profile, {0.5, 460, 0.1, std::nullopt}).value();
    const auto bad = tuner.update(std::nan(""));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("current intensity"), std::string::npos);
}

TEST(CarbonAwarePowerLimit, SelectorSpecsAreChecked) {
    auto constant = constant_intensity(300);
    ASSERT_TRUE(constant.ok());
    auto now = intensity_now(std::shared_ptr<CarbonIntensityProvider>(std::move(constant).value()));
    EXPECT_TRUE(parse_selector_with_carbon("carbon", now).ok());
    EXPECT_TRUE(parse_selector_with_carbon("zeus-cost:eta=0.3", nullptr).ok());
    for (const char* bad :
         {"carbon:eta=2", "carbon:threshold=-1", "carbon:reference=0", "carbon:speed=1", "carbon:eta"}) {
        auto s = parse_selector_with_carbon(bad, now);
        ASSERT_FALSE(s.ok()) << bad;
        EXPECT_EQ(s.error().code, ErrorCode::InvalidArgument) << bad;
    }
    auto missing = parse_selector_with_carbon("carbon:eta=0.5", nullptr);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().describe().find("--carbon-intensity"), std::string::npos) << missing.error().describe();
}

}  // namespace
}  // namespace zeus::carbon
