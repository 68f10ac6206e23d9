// The process-wide open simulator behind the C ABI (NVML and zeusSim*). A C
// ABI library cannot avoid this one global; it is kept fork-aware: the pid of
// the opening process is recorded and a child re-validates its inherited
// mapping on first use, and pthread_atfork keeps the session mutex consistent.
#pragma once

#include <memory>

#include "simulator.h"

namespace zeus::sim {

enum class Opener { kNvml, kApi };

// Reference-counted open. The first open of either kind loads the config from
// the environment and attaches the state. Throws ConfigError or SimError.
void session_open(Opener opener);
// False if `opener` had nothing open.
bool session_close(Opener opener);
// Whether nvmlInit currently holds the session.
bool session_nvml_initialized();
// The open simulator, or nullptr if neither opener holds it. The shared_ptr
// keeps it alive across a concurrent close.
std::shared_ptr<Simulator> session_current();

}  // namespace zeus::sim
