#include "session.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

namespace zeus::sim {
namespace {

struct Session {
  std::mutex mutex;
  int nvml_refs = 0;
  int api_refs = 0;
  pid_t pid = 0;
  std::shared_ptr<Simulator> simulator;
};

// A plain static, so that dlclose of the library frees it (a heap object
// would leak once the library that points to it is unmapped).
Session& session() {
  static Session instance;
  return instance;
}

void register_fork_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork([] { session().mutex.lock(); }, [] { session().mutex.unlock(); },
                   [] { session().mutex.unlock(); });
  });
}

// Called with the session mutex held.
void check_fork(Session& s) {
  if (s.simulator && s.pid != getpid()) {
    s.simulator->after_fork();
    s.pid = getpid();
  }
}

}  // namespace

void session_open(Opener opener) {
  register_fork_handlers();
  Session& s = session();
  std::lock_guard lock(s.mutex);
  check_fork(s);
  if (!s.simulator) {
    SimConfig config = load_config_from_environment();
    // Unset or empty: private state.
    const char* state_path = std::getenv(kStateEnv);
    s.simulator = std::make_shared<Simulator>(std::move(config), state_path ? state_path : "");
    s.pid = getpid();
  }
  (opener == Opener::kNvml ? s.nvml_refs : s.api_refs)++;
}

bool session_close(Opener opener) {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  check_fork(s);
  int& refs = opener == Opener::kNvml ? s.nvml_refs : s.api_refs;
  if (refs == 0) return false;
  --refs;
  if (s.nvml_refs == 0 && s.api_refs == 0) s.simulator.reset();
  return true;
}

bool session_nvml_initialized() {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  return s.nvml_refs > 0;
}

std::shared_ptr<Simulator> session_current() {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  check_fork(s);
  return s.simulator;
}

}  // namespace zeus::sim
