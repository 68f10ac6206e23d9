// Communicator over MPI_COMM_WORLD (library zeus_profile_mpi).
#include "zeus/profile/mpi_communicator.hpp"

#include <mpi.h>

#include <string>

namespace zeus::profile {
namespace {

Error mpi_error(const char* call, int code) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    return Error{ErrorCode::OperatingSystem, std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)),
                 "check that the program runs under mpirun and that MPI works (mpirun -np 2 hostname)", 0};
}

class MpiCommunicator final : public Communicator {
  public:
    MpiCommunicator(int rank, int size, bool owns_mpi) : rank_(rank), size_(size), owns_mpi_(owns_mpi) {}
    ~MpiCommunicator() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (owns_mpi_ && finalized == 0) MPI_Finalize();
    }
    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return size_; }
    [[nodiscard]] Result<std::vector<double>> all_reduce(std::vector<double> values, ReduceOp op) override {
        std::vector<double> out(values.size());
        const int rc = MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                                     op == ReduceOp::Sum ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_error("MPI_Allreduce", rc);
        return out;
    }

  private:
    int rank_;
    int size_;
    bool owns_mpi_;
};

}  // namespace

Result<std::unique_ptr<Communicator>> open_mpi_communicator(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    const bool owns = initialized == 0;
    if (owns) {
        int provided = 0;
        // Only the calling thread uses MPI; the monitors' threads never do.
        if (const int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided); rc != MPI_SUCCESS) {
            return mpi_error("MPI_Init_thread", rc);
        }
    }
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>(rank, size, owns));
}

}  // namespace zeus::profile
