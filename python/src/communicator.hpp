// How ranks of a distributed job combine their numbers in the profiler and the
// power-limit optimizer: through the framework that runs the job, as the
// original's zeus.utils.framework.all_reduce (torch.distributed: energy summed,
// time the slowest rank's), behind the C++ core's Communicator interface.
#pragma once

#include <memory>

#include "zeus/profile/communicator.hpp"

namespace zeus::python {

// The running framework's communicator (torch.distributed with a process
// group up), or null when this process is not one of several. GIL held.
[[nodiscard]] std::unique_ptr<profile::Communicator> framework_communicator();

}  // namespace zeus::python
