// End to end: `zeus exporter --attribution --kubelet-socket` on the GPU
// simulator, with simulated processes whose fake /proc cgroups place them in
// pods, and a fake kubelet serving the real PodResources v1 gRPC service. The
// scraped workload series carry the pods' namespace, pod and container names;
// whether the kubelet answers, is down or is too slow, the workloads and the
// remainder add up to each GPU's energy counter, and the kubelet's failures
// are counted.
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include "fake_kubelet.hpp"
#include "metrics/prometheus_servers.hpp"
#include "support/build_paths.hpp"
#include "support/command_output.hpp"
#include "support/sim_fixture.hpp"

namespace zeus::testing {
namespace {

using namespace std::chrono_literals;

const std::string kUidA = "4f1b3a8e-9c7d-4e2a-8b1f-2a3c4d5e6f70";
const std::string kUidB = "5a2c4b9f-0d8e-4f3b-9c2a-3b4d5e6f7a81";
const std::string kContainerA(64, 'a');
const std::string kContainerB(64, 'b');
constexpr const char* kWorkloads = "zeus_workload_gpu_energy_joules_total";

class KubeletEndToEnd : public SimulatedGpus {
  protected:
    void SetUp() override {
        SimulatedGpus::SetUp();
        configure(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "A100-SXM4-40GB"}]})");
        gpus_ = Gpus::open(simulated());  // the shared state the exporter opens too; open for the loads
        ASSERT_EQ(gpus_.size(), 2U);
        uuid_ = {gpus_[0].identity().uuid, gpus_[1].identity().uuid};
        // Pod A by the systemd driver and CRI-O, pod B by cgroupfs and
        // containerd, and a Slurm job that is no pod.
        write_cgroup(5001, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + underscored(kUidA) +
                               ".slice/crio-" + kContainerA + ".scope\n");
        write_cgroup(5002, "12:memory:/kubepods/besteffort/pod" + kUidB + "/" + kContainerB + "\n");
        write_cgroup(5003, "0::/system.slice/slurmstepd.scope/job_31/step_0/user/task_0\n");
    }
    void TearDown() override {
        for (int load : loads_) zeusSimLoadEnd(load);
    }

    static std::string underscored(std::string uid) {
        std::replace(uid.begin(), uid.end(), '-', '_');
        return uid;
    }
    void write_cgroup(int pid, const std::string& text) const {
        std::filesystem::create_directories(proc() / std::to_string(pid));
        std::ofstream(proc() / std::to_string(pid) / "cgroup") << text;
    }
    std::filesystem::path proc() const { return dir_ / "proc"; }
    std::filesystem::path socket() const { return dir_ / "kubelet.sock"; }

    // Trainer in pod A on GPU 0 (whole), server in pod B on a replica of GPU 1.
    std::vector<FakePod> pods() const {
        return {{"ml", "train-a", {{"trainer", {{"nvidia.com/gpu", {uuid_[0]}}}}}},
                {"serve",
                 "infer-b",
                 {{"server", {{"nvidia.com/gpu.shared", {uuid_[1] + "::1"}}}}, {"proxy", {{"cpu", {"3"}}}}}},
                {"kube-system", "dns", {{"coredns", {}}}}};
    }

    void start_processes() {
        for (const auto& [gpu, utilization, pid] :
             {std::tuple{0U, 0.6, 5001}, std::tuple{1U, 0.5, 5002}, std::tuple{0U, 0.3, 5003}}) {
            int load = -1;
            ASSERT_EQ(zeusSimProcessLoadBegin(gpu, utilization, pid, 1.0, &load), ZEUS_SIM_OK) << zeusSimLastError();
            loads_.push_back(load);
        }
    }

    ExporterProcess exporter(std::vector<std::string> more) const {
        std::vector<std::string> args{"--simulate", "--cpus",        "none",   "--period",
                                      "0.25",       "--attribution", "--proc", proc().string()};
        args.insert(args.end(), more.begin(), more.end());
        return ExporterProcess(std::move(args));
    }

    // zeusd's metrics group with --attribution: the same series, from the daemon.
    ServerProcess zeusd(std::vector<std::string> more) const {
        ::setenv("ZEUS_SIMULATE", "1", 1);  // zeusd has no --simulate flag
        std::vector<std::string> args{"serve",         "--mode", "tcp",          "--enable", "gpu-read,metrics",
                                      "--attribution", "--proc", proc().string()};
        args.insert(args.end(), more.begin(), more.end());
        return ServerProcess(ServerProcess::Launch{zeusd_path(), "zeusd", std::move(args), "--tcp-bind-address=",
                                                   "/metrics", std::nullopt, " zeusd: listening on "},
                             ServerProcess::make_dir("zeusd"));
    }

    static std::vector<ParsedSample> scrape(const ServerProcess& exporter) {
        return parse_exposition(http_get(exporter.base_url(), "/metrics"));
    }

    // Scrapes until `done` holds for a scrape (at most 15 s); that scrape.
    template <class Done>
    static std::vector<ParsedSample> scrape_until(const ServerProcess& exporter, Done done) {
        std::vector<ParsedSample> samples;
        for (int i = 0; i < 150; ++i) {
            samples = scrape(exporter);
            if (done(samples)) break;
            std::this_thread::sleep_for(100ms);
        }
        return samples;
    }

    static std::optional<std::map<std::string, std::string>> labels_of_pod(const std::vector<ParsedSample>& samples,
                                                                           const std::string& uid) {
        // One series per way its energy was obtained (exclusive, utilization): the same pod labels.
        const auto found = find_samples(samples, kWorkloads, {{"pod_uid", uid}});
        if (found.empty()) return std::nullopt;
        return found[0].labels;
    }

    // sum(workloads) + sum(remainder) == the GPU's counter, for each GPU of the scrape.
    static void expect_identity(const std::vector<ParsedSample>& samples) {
        for (const std::string gpu : {"0", "1"}) {
            const auto counter = find_samples(samples, "zeus_gpu_energy_joules_total", {{"gpu", gpu}});
            ASSERT_EQ(counter.size(), 1U) << "GPU " << gpu;
            double sum = 0;
            for (const auto& s : find_samples(samples, kWorkloads, {{"gpu", gpu}})) sum += s.value;
            for (const auto& s :
                 find_samples(samples, "zeus_workload_gpu_remainder_energy_joules_total", {{"gpu", gpu}})) {
                sum += s.value;
            }
            // Integer millijoules in the exporter; the text format's doubles round.
            EXPECT_NEAR(sum, counter[0].value, 1e-9 * counter[0].value + 1e-6) << "GPU " << gpu;
        }
    }

    static double energy_of(const std::vector<ParsedSample>& samples, const std::string& pod) {
        double total = 0;
        for (const auto& s : find_samples(samples, kWorkloads, {{"pod_name", pod}})) total += s.value;
        return total;
    }

    static double kubelet_errors(const std::vector<ParsedSample>& samples, const std::string& reason) {
        double total = 0;
        for (const auto& s :
             find_samples(samples, "zeus_exporter_read_errors_total", {{"device", "kubelet"}, {"reason", reason}})) {
            total += s.value;
        }
        return total;
    }

    Gpus gpus_;
    std::vector<std::string> uuid_;
    std::vector<int> loads_;
};

TEST_F(KubeletEndToEnd, TheKubeletsNamesLabelTheWorkloadsAndTheIdentityHolds) {
    FakeKubelet kubelet(socket(), pods());
    ASSERT_TRUE(kubelet.serving());
    ASSERT_NO_FATAL_FAILURE(start_processes());
    const auto process = exporter({"--kubelet-socket", socket().string()});
    ASSERT_TRUE(process.running()) << process.log();

    const auto named = [](const std::vector<ParsedSample>& samples) {
        auto a = labels_of_pod(samples, kUidA), b = labels_of_pod(samples, kUidB);
        return a && b && a->contains("pod_name") && b->contains("pod_name");
    };
    const auto samples = scrape_until(process, named);
    ASSERT_TRUE(named(samples)) << process.log();
    const auto a = *labels_of_pod(samples, kUidA);
    EXPECT_EQ(a.at("pod_namespace"), "ml");
    EXPECT_EQ(a.at("pod_name"), "train-a");
    EXPECT_EQ(a.at("container_name"), "trainer");
    EXPECT_EQ(a.at("container_id"), kContainerA);
    EXPECT_EQ(a.at("gpu"), "0");
    const auto b = *labels_of_pod(samples, kUidB);
    EXPECT_EQ(b.at("pod_namespace"), "serve");
    EXPECT_EQ(b.at("pod_name"), "infer-b");
    EXPECT_EQ(b.at("container_name"), "server");
    EXPECT_EQ(b.at("gpu"), "1");
    const auto slurm = find_samples(samples, kWorkloads, {{"slurm_job", "31"}});
    ASSERT_EQ(slurm.size(), 1U);
    EXPECT_FALSE(slurm[0].labels.contains("pod_namespace"));
    EXPECT_EQ(kubelet_errors(samples, "unavailable") + kubelet_errors(samples, "timeout"), 0);
    expect_identity(samples);

    // Every pod on a GPU has its name: the kubelet is no longer asked, and the names stay.
    const int calls = kubelet.calls();
    EXPECT_GE(calls, 1);
    std::this_thread::sleep_for(1s);  // four sweeps
    const auto later = scrape(process);
    EXPECT_EQ(kubelet.calls(), calls);
    EXPECT_EQ(labels_of_pod(later, kUidA).value_or(std::map<std::string, std::string>{})["pod_name"], "train-a");
    EXPECT_GT(energy_of(later, "train-a"), energy_of(samples, "train-a"));
    expect_identity(later);
}

// zeusd --attribution names pods through the kubelet as the exporter does;
// with --kubelet-socket none it does not ask, and pods keep their UIDs.
TEST_F(KubeletEndToEnd, ZeusdNamesPodsThroughTheKubeletToo) {
    FakeKubelet kubelet(socket(), pods());
    ASSERT_TRUE(kubelet.serving());
    ASSERT_NO_FATAL_FAILURE(start_processes());
    const auto named = [](const std::vector<ParsedSample>& samples) {
        auto a = labels_of_pod(samples, kUidA), b = labels_of_pod(samples, kUidB);
        return a && b && a->contains("pod_name") && b->contains("pod_name");
    };
    {
        const auto daemon = zeusd({"--kubelet-socket", socket().string(), "--kubelet-timeout", "2"});
        ASSERT_TRUE(daemon.running()) << daemon.log();
        const auto samples = scrape_until(daemon, named);
        ASSERT_TRUE(named(samples)) << daemon.log();
        EXPECT_EQ(labels_of_pod(samples, kUidA)->at("pod_namespace"), "ml");
        EXPECT_EQ(labels_of_pod(samples, kUidB)->at("pod_name"), "infer-b");
        EXPECT_EQ(labels_of_pod(samples, kUidB)->at("container_name"), "server");
        expect_identity(samples);
    }
    const int calls = kubelet.calls();
    EXPECT_GE(calls, 1);
    const auto daemon = zeusd({"--kubelet-socket", "none"});
    ASSERT_TRUE(daemon.running()) << daemon.log();
    const auto samples = scrape_until(daemon, [](const auto& s) { return labels_of_pod(s, kUidA).has_value(); });
    ASSERT_TRUE(labels_of_pod(samples, kUidA)) << daemon.log();
    EXPECT_FALSE(labels_of_pod(samples, kUidA)->contains("pod_name"));
    EXPECT_EQ(kubelet.calls(), calls);
    expect_identity(samples);
}

// zeusd's kubelet flags are checked as the exporter's: an empty or folder socket is refused naming the fix.
TEST_F(KubeletEndToEnd, ZeusdRefusesASocketThatCannotBeTheKubelets) {
    const auto folder = dir_ / "pod-resources";
    std::filesystem::create_directories(folder);
    for (const auto& [flag, problem] : {std::pair{std::string("''"), "--kubelet-socket is empty"},
                                        std::pair{folder.string(), "is a folder, not the kubelet's socket"}}) {
        int code = 0;
        const std::string out = capture("ZEUS_SIMULATE=1 timeout 10 " + zeusd_path() +
                                            " serve --mode tcp --tcp-bind-address 127.0.0.1:0 --enable "
                                            "gpu-read,metrics --attribution --kubelet-socket " +
                                            flag,
                                        code);
        EXPECT_NE(code, 0) << out;
        EXPECT_NE(code, 124) << "zeusd accepted --kubelet-socket " << flag << ":\n" << out;
        EXPECT_NE(out.find(problem), std::string::npos) << out;
    }
}

TEST_F(KubeletEndToEnd, NoKubeletLeavesPodUidsAndCountsUnavailable) {
    ASSERT_NO_FATAL_FAILURE(start_processes());
    const auto process = exporter({"--kubelet-socket", (dir_ / "no-kubelet.sock").string()});
    ASSERT_TRUE(process.running()) << process.log();
    const auto samples = scrape_until(process, [](const auto& s) {
        return labels_of_pod(s, kUidA) && labels_of_pod(s, kUidB) && kubelet_errors(s, "unavailable") > 0;
    });
    EXPECT_GT(kubelet_errors(samples, "unavailable"), 0) << process.log();
    for (const std::string& uid : {kUidA, kUidB}) {
        const auto labels = labels_of_pod(samples, uid);
        ASSERT_TRUE(labels) << uid << "\n" << process.log();
        EXPECT_FALSE(labels->contains("pod_namespace")) << uid;
        EXPECT_FALSE(labels->contains("pod_name")) << uid;
    }
    expect_identity(samples);
    EXPECT_NE(process.log().find("no-kubelet.sock"), std::string::npos) << process.log();
}

TEST_F(KubeletEndToEnd, ASlowKubeletIsATimeoutUntilItAnswersInTime) {
    FakeKubelet kubelet(socket(), pods());
    kubelet.delay(10s);  // cut short when the exporter gives up
    ASSERT_NO_FATAL_FAILURE(start_processes());
    const auto process = exporter({"--kubelet-socket", socket().string(), "--kubelet-timeout", "0.1"});
    ASSERT_TRUE(process.running()) << process.log();
    const auto slow = scrape_until(
        process, [](const auto& s) { return labels_of_pod(s, kUidA) && kubelet_errors(s, "timeout") > 0; });
    EXPECT_GT(kubelet_errors(slow, "timeout"), 0) << process.log();
    ASSERT_TRUE(labels_of_pod(slow, kUidA));
    EXPECT_FALSE(labels_of_pod(slow, kUidA)->contains("pod_name"));
    expect_identity(slow);

    kubelet.delay(0ms);
    const auto named = scrape_until(process, [](const auto& s) {
        auto a = labels_of_pod(s, kUidA);
        return a && a->contains("pod_name");
    });
    ASSERT_TRUE(labels_of_pod(named, kUidA)) << process.log();
    EXPECT_EQ(labels_of_pod(named, kUidA)->at("pod_name"), "train-a");
    expect_identity(named);
}

// --idle-policy allocation: a GPU the kubelet allocated whole to one
// container is that pod's, idle included, while none of its processes runs.
TEST_F(KubeletEndToEnd, UnderTheAllocationPolicyAnIdleGpuIsItsHoldersEnergy) {
    FakeKubelet kubelet(socket(), {{"ml", "train-a", {{"trainer", {{"nvidia.com/gpu", {uuid_[0]}}}}}},
                                   {"ml", "waiting", {{"main", {{"nvidia.com/gpu", {uuid_[1]}}}}}}});
    int load = -1;
    ASSERT_EQ(zeusSimProcessLoadBegin(0, 0.6, 5001, 1.0, &load), ZEUS_SIM_OK) << zeusSimLastError();
    loads_.push_back(load);
    const auto process = exporter({"--kubelet-socket", socket().string(), "--idle-policy", "allocation"});
    ASSERT_TRUE(process.running()) << process.log();
    const auto held = [](const std::vector<ParsedSample>& samples) {
        const auto found = find_samples(samples, kWorkloads, {{"gpu", "1"}, {"attribution", "allocation"}});
        return found.size() == 1 && found[0].value > 0 && labels_of_pod(samples, kUidA);
    };
    const auto samples = scrape_until(process, held);
    ASSERT_TRUE(held(samples)) << process.log();
    const auto holder = find_samples(samples, kWorkloads, {{"gpu", "1"}, {"attribution", "allocation"}})[0].labels;
    EXPECT_EQ(holder.at("kind"), "pod");
    EXPECT_EQ(holder.at("pod_namespace"), "ml");
    EXPECT_EQ(holder.at("pod_name"), "waiting");
    EXPECT_EQ(holder.at("container_name"), "main");
    // From the first sweep on, nothing of GPU 1 is idle or no_process remainder.
    for (const std::string reason : {"idle", "no_process"}) {
        const auto rest = find_samples(samples, "zeus_workload_gpu_remainder_energy_joules_total",
                                       {{"gpu", "1"}, {"reason", reason}});
        ASSERT_EQ(rest.size(), 1U);
        EXPECT_EQ(rest[0].value, 0) << reason;
    }
    // GPU 0's pod runs: its process has the GPU, idle included; the holder series is GPU 1's alone.
    EXPECT_EQ(labels_of_pod(samples, kUidA)->at("pod_name"), "train-a");
    EXPECT_TRUE(find_samples(samples, kWorkloads, {{"gpu", "0"}, {"attribution", "allocation"}}).empty());
    expect_identity(samples);
}

TEST_F(KubeletEndToEnd, AnEmptySocketIsAClearError) {
    int code = 0;
    const std::string out =
        capture(zeus_cli_path() + " exporter --simulate --cpus none --attribution --kubelet-socket ''", code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("--kubelet-socket is empty"), std::string::npos) << out;
    EXPECT_NE(out.find("or none"), std::string::npos) << out;
}

// A folder (the pod-resources mount itself) or a regular file never becomes
// the kubelet's socket: refused at start naming it, not counted as
// "unavailable" forever. A path that does not exist yet is the kubelet's to create.
TEST_F(KubeletEndToEnd, ASocketPathThatIsAFolderOrAFileIsAClearError) {
    const auto folder = dir_ / "pod-resources";
    std::filesystem::create_directories(folder);
    const auto file = dir_ / "not-a-socket";
    std::ofstream(file) << "x";
    for (const auto& [path, problem, fix] :
         {std::tuple{folder, "is a folder, not the kubelet's socket", "/kubelet.sock"},
          std::tuple{file, "is no socket", "or none"}}) {
        int code = 0;
        // Bounded: an exporter that accepted the path would serve until killed (exit 124).
        const std::string out =
            capture("timeout 10 " + zeus_cli_path() +
                        " exporter --simulate --cpus none --attribution --kubelet-socket " + path.string(),
                    code);
        EXPECT_EQ(code, 2) << out;
        EXPECT_NE(out.find("--kubelet-socket: " + path.string() + " " + problem), std::string::npos) << out;
        EXPECT_NE(out.find(fix), std::string::npos) << out;
    }
}

// The attribution options without --attribution are a forgotten flag, not
// something to ignore: the exporter would serve no per-workload series.
TEST_F(KubeletEndToEnd, AttributionOptionsWithoutAttributionAreAClearError) {
    for (const std::string option : {"--idle-policy allocation", "--attribution-expiry 60", "--proc /proc",
                                     "--kubelet-socket none", "--kubelet-timeout 5"}) {
        int code = 0;
        const std::string out =
            capture("timeout 10 " + zeus_cli_path() + " exporter --simulate --cpus none " + option, code);
        EXPECT_EQ(code, 2) << option << ": " << out;
        const std::string flag = option.substr(0, option.find(' '));
        EXPECT_NE(out.find(flag + " requires --attribution"), std::string::npos) << out;
    }
}

}  // namespace
}  // namespace zeus::testing
