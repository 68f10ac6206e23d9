// The MPI communicator for the profiler (library zeus_profile_mpi, target
// zeus::profile_mpi; built only when CMake finds MPI). Each rank runs the
// same profiling call on its own GPU(s); trials are combined across
// MPI_COMM_WORLD.
//
//   auto comm = zeus::profile::open_mpi_communicator(&argc, &argv).value();
//   zeus::profile::ProfileContext ctx{gpus, *monitor};
//   ctx.communicator = comm.get();
//
// The header does not include <mpi.h>, so code that uses it needs MPI's
// headers only when it calls MPI itself.
#pragma once

#include <memory>

#include "zeus/platform/error.hpp"
#include "zeus/profile/communicator.hpp"

namespace zeus::profile {

// A communicator over MPI_COMM_WORLD. Initialises MPI (MPI_Init_thread with
// MPI_THREAD_FUNNELED; argc/argv may be null) unless the program already
// did, and finalises it when destroyed only if it initialised it.
// Errors: OperatingSystem when MPI cannot be initialised.
[[nodiscard]] Result<std::unique_ptr<Communicator>> open_mpi_communicator(int* argc = nullptr, char*** argv = nullptr);

}  // namespace zeus::profile
