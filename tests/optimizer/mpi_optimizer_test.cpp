// Run with `mpirun -np 2`: each rank trains on its own simulated A40 (its own
// configuration and state, virtual clock) and the power-limit optimizers of
// both ranks profile together over MPI. Rank 1's work is slower and draws
// less power, so neither rank's numbers equal the combined ones. Each rank
// records what its own monitor measured per window; rank 0 gathers both and
// checks that every measurement is the sum of the energies and the longer of
// the times, that both ranks counted 2 GPUs and chose the same limit.
#include <mpi.h>
#include <unistd.h>
#include <zeus_sim/zeus_sim.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/mpi_check.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"
#include "zeus/profile/mpi_communicator.hpp"
#include "support/build_paths.hpp"

namespace {

using zeus::testing::gather_to_rank0;

// Keeps what this rank's monitor measured for each window it ended.
class LocalWindows final : public zeus::EnergyMonitor {
  public:
    explicit LocalWindows(zeus::EnergyMonitor& inner) : inner_(inner) {}
    zeus::Status begin_window(std::string_view name, bool sync, bool restart) override {
        return inner_.begin_window(name, sync, restart);
    }
    zeus::Result<zeus::Measurement> end_window(std::string_view name, bool sync, bool cancel) override {
        auto m = inner_.end_window(name, sync, cancel);
        if (m && !cancel) {
            energy.push_back(m->total_gpu_energy().count());
            time.push_back(m->time.count());
        }
        return m;
    }
    std::vector<std::string> reset_windows() override { return inner_.reset_windows(); }
    [[nodiscard]] std::vector<std::string> open_windows() const override { return inner_.open_windows(); }
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return inner_.gpu_indices(); }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return inner_.cpu_indices(); }
    std::vector<double> energy;
    std::vector<double> time;

  private:
    zeus::EnergyMonitor& inner_;
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
    const auto dir = std::filesystem::temp_directory_path() /
                     ("zeus-mpi-plo-" + std::to_string(::getpid()) + "-rank" + std::to_string(rank));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "sim.json") << R"({"clock": "virtual", "gpus": [{"model": "A40"}]})";
    setenv("ZEUS_SIM_CONFIG", (dir / "sim.json").c_str(), 1);
    setenv("ZEUS_SIM_STATE", (dir / "state").c_str(), 1);
    unsetenv("CUDA_VISIBLE_DEVICES");

    zeus::GpuOptions options;
    options.simulate = true;
    options.simulator_library = zeus::testing::sim_nvml_library_path();
    const zeus::Gpus gpus = zeus::Gpus::open(options);
    CHECK(gpus.size() == 1U, "rank %d sees %zu GPUs", rank, gpus.size());
    auto inner = zeus::EnergyMonitor::open(gpus, nullptr, nullptr).value();
    LocalWindows monitor(*inner);

    // An epoch takes longer at lower limits; rank 1 is 10% slower and draws 10% less.
    std::vector<double> limits, epoch_s, power_w;
    for (int p = 100; p <= 300; p += 25) {
        limits.push_back(p);
        epoch_s.push_back((rank == 0 ? 1.0 : 1.1) * 4.0 * std::pow(300.0 / p, 0.5));
        power_w.push_back((rank == 0 ? 1.0 : 0.9) * (40.0 + 0.8 * p));
    }
    int profile = -1;
    CHECK(zeusSimTraceProfileDefine("rank", static_cast<unsigned>(limits.size()), limits.data(), epoch_s.data(),
                                    power_w.data(), &profile) == ZEUS_SIM_OK,
          "rank %d: %s", rank, zeusSimLastError());

    zeus::optimizer::PowerLimitOptimizerOptions o;
    o.communicator = comm.get();
    o.warmup_steps = 3;
    o.profile_steps = 10;
    auto created = zeus::optimizer::GlobalPowerLimitOptimizer::create(gpus, monitor, o);
    CHECK(created.ok(), "rank %d: %s", rank, created.ok() ? "" : created.error().describe().c_str());
    if (!created.ok()) MPI_Abort(MPI_COMM_WORLD, 1);
    auto& plo = **created;
    CHECK(plo.world_size() == 2, "rank %d: world size %d", rank, plo.world_size());
    for (int step = 0; step < 10000 && !plo.done(); ++step) {
        const auto s = plo.on_step_begin();
        CHECK(s.ok(), "rank %d step %d: %s", rank, step, s.ok() ? "" : s.error().describe().c_str());
        if (!s.ok()) MPI_Abort(MPI_COMM_WORLD, 1);
        double elapsed = 0;
        CHECK(zeusSimRunTraceWork(0, profile, 0.025, &elapsed) == ZEUS_SIM_OK, "rank %d: %s", rank, zeusSimLastError());
    }
    CHECK(plo.done(), "rank %d did not finish", rank);
    const auto& ms = plo.measurements();
    std::vector<double> combined_energy, combined_time;
    for (const auto& m : ms) {
        combined_energy.push_back(m.energy.count());
        combined_time.push_back(m.time.count());
    }
    const std::size_t n = ms.size();
    CHECK(n == 9 && monitor.energy.size() == n, "rank %d: %zu measurements, %zu windows", rank, n, monitor.energy.size());
    const auto local_energy = gather_to_rank0(monitor.energy, size);
    const auto local_time = gather_to_rank0(monitor.time, size);
    const auto energies = gather_to_rank0(combined_energy, size);
    const auto chosen = gather_to_rank0({static_cast<double>(plo.optimal_power_limit()->count())}, size);
    if (rank == 0) {
        for (std::size_t k = 0; k < n; ++k) {
            const double e0 = local_energy[k], e1 = local_energy[n + k];
            const double t0 = local_time[k], t1 = local_time[n + k];
            CHECK(combined_energy[k] == e0 + e1, "window %zu: energy %g != %g + %g", k, combined_energy[k], e0, e1);
            CHECK(combined_time[k] == std::max(t0, t1), "window %zu: time %g vs %g, %g", k, combined_time[k], t0, t1);
            CHECK(t1 > 1.05 * t0 && e1 != e0, "window %zu: the ranks should differ (%g s, %g s)", k, t0, t1);
            CHECK(energies[k] == energies[n + k], "window %zu: the ranks disagree on the energy", k);
        }
        CHECK(chosen[0] == chosen[1], "the ranks chose %g and %g mW", chosen[0], chosen[1]);
        const auto expected = zeus::optimizer::zeus_cost(0.5, 2).value()->select(ms, {}).value();
        CHECK(chosen[0] == static_cast<double>(expected.count()), "chose %g mW, ZeusCost over 2 GPUs says %lld mW",
              chosen[0], static_cast<long long>(expected.count()));
        std::printf("%s", plo.report().value().to_string().c_str());
    }
    CHECK(gpus[0].power_limit().value() == *plo.optimal_power_limit(), "rank %d runs at another limit", rank);
    created.value().reset();  // restores the limit before the simulator goes
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return zeus::testing::mpi_verdict(rank);
}
