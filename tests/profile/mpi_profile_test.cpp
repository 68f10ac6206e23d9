// Run with `mpirun -np 2`: each rank profiles its own simulated GPU (its own
// configuration and state file) and the trials must combine the ranks'
// measurements as the original does: energy summed, time the longest,
// temperatures averaged; only rank 0 reports progress.
//
// Each rank's own measurements are recorded twice: what its profiler handed
// to the communicator (its monitor's window and temperature readings), and,
// independently, the simulator's exact energy around each iteration of its
// workload. Rank 0 gathers both and checks every trial against them.
#include <mpi.h>
#include <unistd.h>
#include <zeus_sim/zeus_sim.h>

#include <algorithm>
#include <stdexcept>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/mpi_check.hpp"
#include "zeus/profile/mpi_communicator.hpp"
#include "zeus/profile/profile.hpp"
#include "support/build_paths.hpp"

namespace {

using zeus::testing::gather_to_rank0;

using zeus::profile::Communicator;
using zeus::profile::ReduceOp;

// Passes everything to the MPI communicator and keeps this rank's inputs.
class RecordingCommunicator final : public Communicator {
  public:
    explicit RecordingCommunicator(Communicator& inner) : inner_(inner) {}
    [[nodiscard]] int rank() const override { return inner_.rank(); }
    [[nodiscard]] int size() const override { return inner_.size(); }
    [[nodiscard]] zeus::Result<std::vector<double>> all_reduce(std::vector<double> values, ReduceOp op) override {
        // run_trial reduces {energy, temperature before, temperature after} by sum, then {time} by max.
        if (op == ReduceOp::Sum && values.size() == 3) sums.insert(sums.end(), values.begin(), values.end());
        if (op == ReduceOp::Max && values.size() == 1) maxima.push_back(values[0]);
        return inner_.all_reduce(std::move(values), op);
    }
    std::vector<double> sums;    // 3 per trial
    std::vector<double> maxima;  // 1 per trial (no calibration in this test)

  private:
    Communicator& inner_;
};

}  // namespace

int main(int argc, char** argv) {
    auto opened = zeus::profile::open_mpi_communicator(&argc, &argv);
    if (!opened) {
        std::fprintf(stderr, "%s\n", opened.error().describe().c_str());
        return 1;
    }
    auto comm = std::move(opened).value();
    const int rank = comm->rank();
    const int size = comm->size();
    if (size != 2) {
        if (rank == 0) std::fprintf(stderr, "run with mpirun -np 2 (got %d ranks)\n", size);
        return 1;
    }

    // One simulated GPU per rank, each with its own state: rank 1's GPU
    // starts 25 °C hotter (20 s time constant: it stays apart) and works at
    // half utilization, so no rank's numbers equal the combined ones.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("zeus-mpi-test-" + std::to_string(::getpid()) + "-rank" + std::to_string(rank));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "sim.json") << R"({"clock": "real", "gpus": [{"model": "A100-SXM4-40GB",
        "thermal": {"initial_c": )" << (rank == 0 ? 40 : 65) << "}}]}";
    setenv("ZEUS_SIM_CONFIG", (dir / "sim.json").c_str(), 1);
    setenv("ZEUS_SIM_STATE", (dir / "state").c_str(), 1);
    unsetenv("CUDA_VISIBLE_DEVICES");

    zeus::GpuOptions options;
    options.simulate = true;
    options.simulator_library = zeus::testing::sim_nvml_library_path();
    const zeus::Gpus gpus = zeus::Gpus::open(options);
    CHECK(gpus.size() == 1U, "rank %d sees %zu GPUs", rank, gpus.size());
    zeus::EnergyMonitorOptions monitor_options;
    monitor_options.gpu_indices = std::vector<unsigned>{0};
    auto monitor = zeus::EnergyMonitor::open(gpus, nullptr, nullptr, monitor_options).value();

    RecordingCommunicator recorder(*comm);
    zeus::profile::ProfileContext ctx{gpus, *monitor};
    ctx.communicator = &recorder;
    double progress_events = 0;
    ctx.progress = [&](const zeus::profile::ProgressEvent&) { progress_events += 1; };

    // Every call of the workload is inside a trial's window (no warm-up
    // iterations or trials, no calibration), so the simulator's exact energy
    // of each call adds up to each trial's energy on this rank.
    const double utilization = rank == 0 ? 1.0 : 0.5;
    std::vector<double> truth_per_call;
    std::vector<double> busy_per_call;  // seconds inside the simulator's work
    const zeus::profile::Target work = [&] {
        double before = 0;
        double after = 0;
        double elapsed = 0;
        zeusSimGroundTruthEnergy(0, &before);
        if (zeusSimRunWork(0, 0.02 * utilization, utilization, &elapsed) != ZEUS_SIM_OK) {
            throw std::runtime_error(zeusSimLastError());
        }
        zeusSimGroundTruthEnergy(0, &after);
        truth_per_call.push_back(after - before);
        busy_per_call.push_back(elapsed);
    };
    zeus::profile::MeasurementSweepOptions o;
    o.measurement_duration_search_range = {0.2, 0.4};
    o.cooldown_duration = 0.05;
    o.num_trials = 2;
    o.num_warmup_trials = 0;
    o.num_warmup_iterations = 0;
    o.iteration_duration = 0.02;
    auto report = zeus::profile::profile_measurement_duration(ctx, work, o);
    CHECK(report.ok(), "rank %d: %s", rank, report.ok() ? "" : report.error().describe().c_str());
    if (!report.ok()) MPI_Abort(MPI_COMM_WORLD, 1);

    std::vector<const zeus::profile::TrialResult*> trials;
    for (const auto& e : report->entries) {
        for (const auto& t : e.trials) trials.push_back(&t);
    }
    // This rank's exact energy per trial, from its own calls.
    std::vector<double> truth_per_trial;
    std::vector<double> busy_per_trial;
    std::size_t call = 0;
    for (const auto* t : trials) {
        double sum = 0;
        double busy = 0;
        for (std::size_t i = 0; i < t->iterations && call < truth_per_call.size(); ++i) {
            busy += busy_per_call[call];
            sum += truth_per_call[call++];
        }
        truth_per_trial.push_back(sum);
        busy_per_trial.push_back(busy);
    }
    // The most the GPU can draw between calls: its highest power limit.
    const auto limits = gpus[0].power_limit_constraints();
    CHECK(limits.ok(), "rank %d: no power limit constraints", rank);
    const double ceiling_w = limits.ok() ? zeus::quantity_cast<zeus::Watts>(limits->max).count() : 0.0;
    CHECK(call == truth_per_call.size(), "rank %d: %zu calls, %zu in trials", rank, truth_per_call.size(), call);
    CHECK(recorder.sums.size() == 3 * trials.size(), "rank %d: %zu sums", rank, recorder.sums.size());
    CHECK(recorder.maxima.size() == trials.size(), "rank %d: %zu maxima", rank, recorder.maxima.size());

    const auto sums = gather_to_rank0(recorder.sums, size);
    const auto maxima = gather_to_rank0(recorder.maxima, size);
    const auto truths = gather_to_rank0(truth_per_trial, size);
    const auto busy = gather_to_rank0(busy_per_trial, size);
    const auto progress = gather_to_rank0({progress_events}, size);

    if (rank == 0) {
        const std::size_t n = trials.size();
        CHECK(progress[0] > 0 && progress[1] == 0, "progress events: rank 0 %g, rank 1 %g", progress[0], progress[1]);
        for (std::size_t i = 0; i < n; ++i) {
            const auto& t = *trials[i];
            const double e0 = sums[3 * i];
            const double e1 = sums[3 * n + 3 * i];
            const double tb0 = sums[3 * i + 1];
            const double tb1 = sums[3 * n + 3 * i + 1];
            const double ta0 = sums[3 * i + 2];
            const double ta1 = sums[3 * n + 3 * i + 2];
            CHECK(t.total_energy == e0 + e1, "trial %zu: energy %g != %g + %g", i, t.total_energy, e0, e1);
            CHECK(t.total_time == std::max(maxima[i], maxima[n + i]), "trial %zu: time %g vs %g, %g", i, t.total_time,
                  maxima[i], maxima[n + i]);
            CHECK(t.temperature_before == (tb0 + tb1) / 2, "trial %zu: before %g vs %g, %g", i, t.temperature_before,
                  tb0, tb1);
            CHECK(t.temperature_after == (ta0 + ta1) / 2, "trial %zu: after %g vs %g, %g", i, t.temperature_after, ta0,
                  ta1);
            CHECK(std::abs(tb1 - tb0) > 10, "trial %zu: the GPUs should differ by ~25 °C: %g, %g", i, tb0, tb1);
            CHECK(t.energy_per_iter == t.total_energy / static_cast<double>(t.iterations), "trial %zu", i);
            // Independently of the profiler: the simulator's exact energy of
            // each rank's work. The window also holds the gaps between calls
            // (longer on a loaded machine), in which the GPU drew at most its
            // power ceiling, and each window edge interpolates the counter past
            // its last refresh (every 100 ms), off by up to the ceiling × 100 ms
            // when the load changed in between (docs/monitoring.md).
            for (int r = 0; r < 2; ++r) {
                const double measured = r == 0 ? e0 : e1;
                const double truth = truths[r * n + i];
                const double gap_s = std::max(maxima[r * n + i] - busy[r * n + i], 0.0);
                const double edges_j = 2 * ceiling_w * 0.1;
                CHECK(measured > truth - edges_j && measured < truth + ceiling_w * gap_s + edges_j,
                      "trial %zu rank %d: %g J measured, ground truth %g J in its calls, %g s between them", i, r,
                      measured, truth, gap_s);
            }
        }
        std::printf("%s\n", report->to_string().c_str());
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return zeus::testing::mpi_verdict(rank);
}
