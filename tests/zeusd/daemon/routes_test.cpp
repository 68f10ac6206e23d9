// Every read route and /discover, /time against the GPUs and CPUs the test
// reads itself, and the original's 400s for every kind of bad query.
#include <chrono>

#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using nlohmann::json;

std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

TEST_F(ZeusdTest, DiscoverDescribesTheSimulatedGpusAndTheRaplPackage) {
    start();
    const auto gpus = local_gpus();
    ASSERT_GT(gpus.size(), 0U);
    const auto reply = get("/discover");
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.headers.at("content-type"), "application/json");
    const auto body = json_of(reply);
    ASSERT_EQ(body["gpus"].size(), gpus.size());
    for (unsigned i = 0; i < gpus.size(); ++i) {
        const auto& gpu = body["gpus"][i];
        EXPECT_EQ(gpu["id"], i);
        EXPECT_EQ(gpu["name"], gpus[i].identity().name);
        // NVML's 8-digit domain becomes the original's 4-digit one.
        const auto& bus_id = gpus[i].identity().pci_bus_id;
        std::string expected = bus_id.substr(4, 7) + bus_id.substr(11, 3) + ".0";
        for (auto& c : expected) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        EXPECT_EQ(gpu["pci_address"], expected) << bus_id;
        EXPECT_EQ(gpu["cumulative_energy_available"], true);
    }
    EXPECT_EQ(body["cpus"], json::parse(R"([{"id":0,"dram_available":true}])"));
    EXPECT_EQ(body["enabled_api_groups"], json::parse(R"(["gpu-control","gpu-read","cpu-read"])"));
    EXPECT_EQ(body["auth_required"], false);
}

TEST_F(ZeusdTest, TimeIsUnixMilliseconds) {
    start();
    const auto before = unix_ms();
    const auto body = json_of(get("/time"));
    const auto after = unix_ms();
    EXPECT_GE(body["timestamp_ms"].get<std::int64_t>(), before);
    EXPECT_LE(body["timestamp_ms"].get<std::int64_t>(), after);
}

TEST_F(ZeusdTest, GpuReadsMatchWhatTheTestReadsItself) {
    start();
    const auto gpus = local_gpus();
    const auto limits = json_of(get("/gpu/get_power_limit"));
    const auto constraints = json_of(get("/gpu/get_power_limit_constraints?gpu_ids=1,0"));
    const auto persistence = json_of(get("/gpu/get_persistence_mode"));
    for (unsigned i = 0; i < gpus.size(); ++i) {
        const auto key = std::to_string(i);
        EXPECT_EQ(limits[key]["power_limit_mw"], gpus[i].power_limit().value().count());
        const auto range = gpus[i].power_limit_constraints().value();
        EXPECT_EQ(constraints[key]["min_power_limit_mw"], range.min.count());
        EXPECT_EQ(constraints[key]["max_power_limit_mw"], range.max.count());
        EXPECT_EQ(persistence[key]["enabled"], gpus[i].persistence_mode().value());
    }
}

TEST_F(ZeusdTest, GpuEnergyIsACumulativeCounterThatGrowsWithTheSimulatedPower) {
    start();
    const auto first = json_of(get("/gpu/get_cumulative_energy?gpu_ids=0"));
    ASSERT_TRUE(first.contains("0")) << first;
    EXPECT_EQ(first.size(), 1U);
    const auto t0 = std::chrono::steady_clock::now();
    ::usleep(300000);
    const auto second = json_of(get("/gpu/get_cumulative_energy?gpu_ids=0"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto delta_mj = second["0"]["energy_mj"].get<std::int64_t>() - first["0"]["energy_mj"].get<std::int64_t>();
    // Between the two reads the GPU drew its power; bound it by the power
    // range the test sees (an idle GPU draws well under its limit).
    const auto gpus = local_gpus();
    const double max_watts = static_cast<double>(gpus[0].power_limit_constraints().value().max.count()) / 1000.0;
    EXPECT_GT(delta_mj, 0);
    EXPECT_LT(static_cast<double>(delta_mj) / 1000.0, max_watts * (seconds + 0.2));
}

TEST_F(ZeusdTest, GpuPowerHasATimestampAndOneValuePerGpu) {
    start();
    const auto before = unix_ms();
    const auto body = json_of(get("/gpu/get_power"));
    const auto gpus = local_gpus();
    EXPECT_GE(body["timestamp_ms"].get<std::int64_t>(), before);
    ASSERT_EQ(body["power_mw"].size(), gpus.size());
    for (unsigned i = 0; i < gpus.size(); ++i) {
        const auto mw = body["power_mw"][std::to_string(i)].get<std::int64_t>();
        EXPECT_GT(mw, 0);
        EXPECT_LE(mw, gpus[i].power_limit_constraints().value().max.count());
    }
}

TEST_F(ZeusdTest, CpuEnergyCountsMicrojoulesSinceTheDaemonOpenedTheCounters) {
    start();
    powercap_.set_energy(package_, kPackageStartUj + 1'234'567);
    powercap_.set_energy(dram_, kDramStartUj + 89'000);
    auto body = json_of(get("/cpu/get_cumulative_energy?cpu=true&dram=true"));
    EXPECT_EQ(body["0"]["cpu_energy_uj"], 1'234'567);
    EXPECT_EQ(body["0"]["dram_energy_uj"], 89'000);
    body = json_of(get("/cpu/get_cumulative_energy?cpu_ids=0&cpu=false&dram=true"));
    EXPECT_TRUE(body["0"]["cpu_energy_uj"].is_null());
    EXPECT_EQ(body["0"]["dram_energy_uj"], 89'000);
    body = json_of(get("/cpu/get_cumulative_energy?cpu=true&dram=false"));
    EXPECT_TRUE(body["0"]["dram_energy_uj"].is_null());
}

TEST_F(ZeusdTest, CpuEnergyFollowsTheCounterAcrossAWrap) {
    // A 1 J counter range, so a wrap comes after a plausible amount of energy.
    constexpr std::uint64_t range = 1'000'000;
    powercap_.write(package_.lexically_relative(powercap_.root()) / "max_energy_range_uj", std::to_string(range));
    powercap_.set_energy(package_, 900'000);
    start();
    powercap_.set_energy(package_, 999'990);
    EXPECT_EQ(json_of(get("/cpu/get_cumulative_energy?cpu=true&dram=false"))["0"]["cpu_energy_uj"], 99'990);
    powercap_.set_energy(package_, 500);
    // energy_uj runs from 0 to the range inclusive: the modulus is range + 1.
    EXPECT_EQ(json_of(get("/cpu/get_cumulative_energy?cpu=true&dram=false"))["0"]["cpu_energy_uj"],
              99'990 + (range + 1 - 999'990) + 500);
}

TEST_F(ZeusdTest, CpuPowerIsTheEnergyOverTheSamplingWindow) {
    start({"--cpu-power-poll-hz", "1"});  // a 1 s window
    // The write must land between the daemon's two readings; on a loaded
    // machine a late request start can miss it, so try a few times.
    nlohmann::json power;
    std::uint64_t package_uj = kPackageStartUj;
    std::uint64_t dram_uj = kDramStartUj;
    for (int attempt = 0; attempt < 4; ++attempt) {
        std::thread writer([&] {
            ::usleep(400000);
            package_uj += 2'000'000;  // 2 J inside the window
            dram_uj += 500'000;
            powercap_.set_energy(package_, package_uj);
            powercap_.set_energy(dram_, dram_uj);
        });
        const auto reply = get("/cpu/get_power");
        writer.join();
        ASSERT_EQ(reply.status, 200) << reply.body;
        power = json_of(reply)["power_mw"]["0"];
        if (power["cpu_mw"].get<double>() > 0 && power["dram_mw"].get<double>() > 0) break;
    }
    // mW = uJ * 1000 / elapsed us; the window is at least 1 s and the
    // request took little longer, so 2 J gives at most 2 W and a bit less.
    EXPECT_LE(power["cpu_mw"].get<double>(), 2000.0);
    EXPECT_GT(power["cpu_mw"].get<double>(), 1500.0);
    EXPECT_LE(power["dram_mw"].get<double>(), 500.0);
    EXPECT_GT(power["dram_mw"].get<double>(), 375.0);
}

struct BadQuery {
    const char* target;
    int status;
    const char* body;  // exact
};

TEST_F(ZeusdTest, BadQueriesGetTheOriginalsErrors) {
    start();
    const BadQuery cases[] = {
        {"/gpu/get_power?foo=1", 400, "Query deserialize error: unknown field `foo`, expected `gpu_ids`"},
        {"/gpu/get_power?gpu_ids=0&gpu_ids=1", 400, "Query deserialize error: duplicate field `gpu_ids`"},
        {"/gpu/get_power?gpu_ids=", 400, R"({"error":"gpu_ids must contain at least one GPU index"})"},
        {"/gpu/get_power?gpu_ids=0,,1", 400, R"({"error":"gpu_ids contains an empty GPU index"})"},
        {"/gpu/get_power?gpu_ids=0,x", 400, R"({"error":"Invalid GPU index: x"})"},
        {"/gpu/get_power?gpu_ids=-1", 400, R"({"error":"Invalid GPU index: -1"})"},
        {"/gpu/get_power?gpu_ids=99999999999999999999", 400,
         R"({"error":"Invalid GPU index: 99999999999999999999"})"},
        {"/gpu/get_power_limit?gpu_ids=7", 400, R"({"error":"GPU 7 not found"})"},
        {"/cpu/get_cumulative_energy?cpu=true", 400, "Query deserialize error: missing field `dram`"},
        {"/cpu/get_cumulative_energy?cpu=yes&dram=true", 400,
         "Query deserialize error: provided string was not `true` or `false`"},
        {"/cpu/get_cumulative_energy?cpu=true&dram=true&cpu_ids=3", 400, R"({"error":"CPU 3 not found"})"},
        {"/cpu/get_power?cpu_ids=a", 400, R"({"error":"Invalid CPU index: a"})"},
        {"/gpu/set_power_limit?gpu_ids=0&power_limit_mw=4294967296&block=true", 400,
         "Query deserialize error: number too large to fit in target type"},
        {"/gpu/set_power_limit?gpu_ids=0&power_limit_mw=-5&block=true", 400,
         "Query deserialize error: invalid digit found in string"},
        {"/gpu/set_power_limit?gpu_ids=0&block=true", 400, "Query deserialize error: missing field `power_limit_mw`"},
        {"/gpu/set_power_limit?gpu_ids=9&power_limit_mw=200000&block=true", 400, "GPU index 9 does not exist."},
        {"/gpu/set_persistence_mode?gpu_ids=0&enabled=1&block=true", 400,
         "Query deserialize error: provided string was not `true` or `false`"},
        {"/gpu/reset_locked_clocks?gpu_ids=0&block=true&persist=true", 400,
         "Query deserialize error: unknown field `persist`, expected one of `gpu_ids`, `block`"},
        {"/gpu/get_power?gpu_ids=%zz", 400, "Bad request target: invalid percent-encoding"},
        {"/gpu/get_power?gpu_ids=%FF", 400, "Bad request target: invalid percent-encoding"},  // not UTF-8
    };
    for (const auto& bad : cases) {
        const bool is_post = std::string(bad.target).find("/set_") != std::string::npos ||
                             std::string(bad.target).find("/reset_") != std::string::npos;
        const auto reply = is_post ? post(bad.target) : get(bad.target);
        EXPECT_EQ(reply.status, bad.status) << bad.target;
        EXPECT_EQ(reply.body, bad.body) << bad.target;
        const bool json_body = bad.body[0] == '{';
        EXPECT_EQ(reply.headers.count("content-type") ? reply.headers.at("content-type") : "", json_body ? "application/json" : "text/plain; charset=utf-8")
            << bad.target;
    }
}

TEST_F(ZeusdTest, IdListsAreTrimmedSortedAndDeduplicated) {
    start();
    const auto body = json_of(get("/gpu/get_power_limit?gpu_ids=%201,0,1%20"));
    EXPECT_EQ(body.size(), 2U);
    EXPECT_TRUE(body.contains("0") && body.contains("1")) << body;
}

TEST_F(ZeusdTest, UnknownRoutesAndWrongMethodsAreRefused) {
    start();
    EXPECT_EQ(get("/nope").status, 404);
    EXPECT_EQ(get("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1&block=true").status, 405);
    EXPECT_EQ(post("/gpu/get_power").status, 405);
}

TEST_F(ZeusdTest, DisabledGroupsAnswerNotEnabledEvenForUnknownPaths) {
    start({"--enable", "cpu-read"});
    for (const char* target : {"/gpu/get_power", "/gpu/nope"}) {
        const auto reply = get(target);
        EXPECT_EQ(reply.status, 404);
        EXPECT_EQ(reply.body, R"({"error":"API group 'gpu-read' is not enabled on this server."})");
    }
    const auto control = post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true");
    EXPECT_EQ(control.body, R"({"error":"API group 'gpu-control' is not enabled on this server."})");
    const auto body = json_of(get("/discover"));
    EXPECT_EQ(body["gpus"], json::array());
    EXPECT_EQ(body["enabled_api_groups"], json::parse(R"(["cpu-read"])"));
    EXPECT_EQ(get("/cpu/get_cumulative_energy?cpu=true&dram=true").status, 200);
}

}  // namespace
}  // namespace zeus::testing
