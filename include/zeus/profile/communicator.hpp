// How the profiler combines the numbers of several processes (ranks) that
// each measure their own GPU(s), as the original does with
// torch.distributed's all_reduce: energy is summed, time takes the maximum,
// temperature is averaged, and only rank 0 reports progress.
//
// libzeus only knows this interface and the single-process implementation;
// the MPI implementation lives in the separate zeus_profile_mpi library
// (zeus/profile/mpi_communicator.hpp) so that libzeus never depends on MPI.
#pragma once

#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::profile {

enum class ReduceOp { Sum, Max };

class Communicator {
  public:
    Communicator() = default;
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;
    virtual ~Communicator() = default;

    [[nodiscard]] virtual int rank() const = 0;
    [[nodiscard]] virtual int size() const = 0;
    // Element-wise reduction of `values` over all ranks; every rank gets the
    // result. Collective: every rank must call it, in the same order, with
    // the same number of values.
    [[nodiscard]] virtual Result<std::vector<double>> all_reduce(std::vector<double> values, ReduceOp op) = 0;
};

// One process: rank 0 of 1, reductions return their input.
class SingleProcessCommunicator final : public Communicator {
  public:
    [[nodiscard]] int rank() const override { return 0; }
    [[nodiscard]] int size() const override { return 1; }
    [[nodiscard]] Result<std::vector<double>> all_reduce(std::vector<double> values, ReduceOp) override {
        return values;
    }
};

}  // namespace zeus::profile
