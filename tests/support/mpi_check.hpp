// What the `mpirun -np 2` test programs share (they run without GoogleTest,
// one process per rank): a CHECK that counts failures instead of stopping,
// gathering each rank's numbers on rank 0, and the verdict over all ranks.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <vector>

namespace zeus::testing {

inline int& mpi_check_failures() {
    static int failures = 0;
    return failures;
}

// Every rank's `mine` (same length on each), rank after rank, on rank 0.
inline std::vector<double> gather_to_rank0(const std::vector<double>& mine, int size) {
    std::vector<double> all(mine.size() * static_cast<std::size_t>(size));
    MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return all;
}

// Sums the failures of every rank; rank 0 prints PASSED or FAILED. Returns
// the process exit code.
inline int mpi_verdict(int rank) {
    int all_failures = 0;
    MPI_Allreduce(&mpi_check_failures(), &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all_failures == 0) std::printf("PASSED\n");
    if (rank == 0 && all_failures != 0) std::printf("FAILED (%d checks)\n", all_failures);
    return all_failures == 0 ? 0 : 1;
}

}  // namespace zeus::testing

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            ++zeus::testing::mpi_check_failures();                                         \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                             \
            std::fprintf(stderr, "\n");                                                    \
        }                                                                                  \
    } while (0)
