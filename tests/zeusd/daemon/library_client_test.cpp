// The library's own client side against a real zeusd: ZeusdClient, and the
// device layer picking the daemon up from ZEUSD_SOCK_PATH: CPU energy read
// through it, GPU settings relayed through it, GPU readings local, and
// measurement working without gpu-control (unlike the original, §12.1).
#include <sys/wait.h>

#include <cstdlib>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"
#include "zeusd_fixture.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

std::int64_t middle_limit(const Gpu& gpu) {
    const auto range = gpu.power_limit_constraints().value();
    auto middle = (range.min.count() + range.max.count()) / 2;
    if (middle == gpu.power_limit().value().count()) middle += 1000;
    return middle;
}

class LibraryClientTest : public ZeusdTest {
  protected:
    void TearDown() override {
        ::unsetenv("ZEUSD_SOCK_PATH");
        ZeusdTest::TearDown();
    }
    void use_daemon_from_environment() const { ::setenv("ZEUSD_SOCK_PATH", endpoint_.unix_path->c_str(), 1); }
};

TEST_F(LibraryClientTest, ZeusdClientReadsAndControlsTheRealDaemon) {
    start();
    auto connected = ZeusdClient::connect(ZeusdConfig::unix_socket(*endpoint_.unix_path));
    ASSERT_TRUE(connected) << connected.error().describe();
    auto& client = *connected.value();
    EXPECT_TRUE(client.can_read_gpu() && client.can_control_gpu() && client.can_read_cpu());
    const auto gpus = local_gpus();
    ASSERT_EQ(client.discovery().gpus.size(), gpus.size());
    EXPECT_EQ(client.discovery().gpus[0].name, gpus[0].identity().name);

    powercap_.set_energy(package_, kPackageStartUj + 42'000);
    const auto energy = client.cpu_energy({0}, true, true);
    ASSERT_TRUE(energy) << energy.error().describe();
    EXPECT_EQ(energy.value().at(0).cpu->count(), 42'000);
    EXPECT_EQ(energy.value().at(0).dram->count(), 0);

    const auto target = middle_limit(gpus[1]);
    ASSERT_TRUE(client.set_power_limit({1}, Milliwatts(target), true));
    EXPECT_EQ(local_gpus()[1].power_limit().value().count(), target);
    EXPECT_EQ(client.power_limit({1}).value().at(1).count(), target);

    const auto refused = client.set_power_limit({7}, Milliwatts(target), true);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("GPU index 7 does not exist."), std::string::npos)
        << refused.error().describe();
}

TEST_F(LibraryClientTest, CpusReadRaplThroughTheDaemonWhenZeusdSockPathIsSet) {
    start();
    use_daemon_from_environment();
    auto options = CpuOptions::from_environment();
    ASSERT_TRUE(options) << options.error().describe();
    options.value().powercap_root = (dir_ / "no-such-powercap").string();  // nothing local to fall back on
    const Cpus cpus = Cpus::open(options.value());
    ASSERT_TRUE(cpus.status()) << cpus.status().error().describe();
    ASSERT_EQ(cpus.size(), 1U);
    const auto before = cpus[0].total_energy().value();
    powercap_.set_energy(package_, kPackageStartUj + 3'000'000);
    powercap_.set_energy(dram_, kDramStartUj + 250'000);
    const auto after = cpus[0].total_energy().value();
    EXPECT_NEAR(after.package.count() - before.package.count(), 3.0, 1e-9);
    ASSERT_TRUE(after.dram && before.dram);
    EXPECT_NEAR(after.dram->count() - before.dram->count(), 0.25, 1e-9);
}

TEST_F(LibraryClientTest, GpuSettingsGoThroughTheDaemonAndAreUndoneWhenTheProcessEnds) {
    start();
    const auto baseline = local_gpus()[0].power_limit().value().count();
    const auto target = middle_limit(local_gpus()[0]);
    const pid_t child = ::fork();
    if (child == 0) {
        ::setenv("ZEUSD_SOCK_PATH", endpoint_.unix_path->c_str(), 1);
        auto options = GpuOptions::from_environment().value();
        options.simulate = true;
        options.simulator_library = zeus::testing::sim_nvml_library_path();
        const Gpus gpus = Gpus::open(options);
        const bool relayed = gpus.backend_info().zeusd_endpoint.has_value();
        const bool set = gpus[0].set_power_limit(Milliwatts(target)).ok();
        const bool visible = gpus[0].power_limit().value().count() == target;
        ::_exit(relayed && set && visible ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log();
    EXPECT_NE(log().find("POST /gpu/set_power_limit?gpu_ids=0"), std::string::npos) << log();
    // The child has exited: the daemon puts the limit back.
    EXPECT_TRUE(eventually([&] { return local_gpus()[0].power_limit().value().count() == baseline; })) << log();
}

// The optimizer's promise beyond the original: a training process that dies
// mid-profiling (no destructor, no atexit) does not leave its GPUs throttled.
TEST_F(LibraryClientTest, APowerLimitOptimizerKilledMidProfilingLeavesNoLimitBehind) {
    start();
    std::vector<std::int64_t> before;
    for (const auto& gpu : local_gpus()) {
        const auto limit = middle_limit(*gpu);
        ASSERT_TRUE(gpu->set_power_limit(Milliwatts(limit)));  // set locally: the daemon has no record of it
        before.push_back(limit);
    }
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(ready[0]);
        ::setenv("ZEUSD_SOCK_PATH", endpoint_.unix_path->c_str(), 1);
        auto options = GpuOptions::from_environment().value();
        options.simulate = true;
        options.simulator_library = zeus::testing::sim_nvml_library_path();
        const Gpus gpus = Gpus::open(options);
        auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
        optimizer::PowerLimitOptimizerOptions o;
        o.warmup_steps = 1;
        o.profile_steps = 1;
        auto plo = optimizer::GlobalPowerLimitOptimizer::create(gpus, *monitor, o);
        if (!plo) ::_exit(2);
        // Call 4 closes the maximum's window and sets the second candidate.
        for (int call = 0; call < 4; ++call) {
            if (!(*plo)->on_step_begin()) ::_exit(3);
        }
        const char lowered = gpus[0].power_limit().value() == (*plo)->candidates().at(1) ? 'y' : 'n';
        (void)!::write(ready[1], &lowered, 1);
        ::kill(::getpid(), SIGKILL);
    }
    ::close(ready[1]);
    char lowered = 0;
    ASSERT_EQ(::read(ready[0], &lowered, 1), 1) << log();
    ::close(ready[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    EXPECT_EQ(lowered, 'y') << "the optimizer had lowered the limit through zeusd";
    for (std::size_t g = 0; g < before.size(); ++g) {
        EXPECT_TRUE(eventually([&] { return local_gpus()[g].power_limit().value().count() == before[g]; }))
            << "GPU " << g << "\n"
            << log();
    }
}

TEST_F(LibraryClientTest, MeasuringNeedsNoGpuControl) {
    start({"--enable", "gpu-read,cpu-read"});
    use_daemon_from_environment();
    auto options = GpuOptions::from_environment().value();
    options.simulate = true;
    options.simulator_library = zeus::testing::sim_nvml_library_path();
    const Gpus gpus = Gpus::open(options);
    ASSERT_TRUE(gpus.status()) << gpus.status().error().describe();
    ASSERT_GT(gpus.size(), 0U);
    EXPECT_TRUE(gpus[0].total_energy()) << "readings stay local";
    const auto refused = gpus[0].set_power_limit(Milliwatts(middle_limit(gpus[0])));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::NoPermission);
    EXPECT_NE(refused.error().describe().find("gpu-control"), std::string::npos) << refused.error().describe();
}

}  // namespace
}  // namespace zeus::testing
