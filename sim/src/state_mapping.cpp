#include "state_mapping.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>

#include "errors.h"
#include "physics.h"

namespace zeus::sim {
namespace {

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw SimError(Status::kState, "simulator state " + (path.empty() ? std::string("<private>") : path) + ": " + what +
                                     " failed: " + std::strerror(errno) +
                                     " (check ZEUS_SIM_STATE names a writable file)");
}

void init_mutex(pthread_mutex_t& mutex) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&mutex, &attr);
  pthread_mutexattr_destroy(&attr);
}

bool usable(const SharedState& s, const SimConfig& config) {
  const StateHeader& h = s.header;
  return h.magic == kStateMagic && h.layout_version == kStateLayoutVersion && h.total_size == sizeof(SharedState) &&
         h.initialized == 1 && h.config_hash == config.hash && h.gpu_count == config.gpus.size();
}

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void initialize_state(SharedState& s, const SimConfig& config, std::int64_t created_unix_ns) {
  std::memset(static_cast<void*>(&s), 0, sizeof s);
  StateHeader& h = s.header;
  h.magic = kStateMagic;
  h.layout_version = kStateLayoutVersion;
  h.total_size = sizeof(SharedState);
  h.config_hash = config.hash;
  h.gpu_count = static_cast<std::uint32_t>(config.gpus.size());
  init_mutex(h.mutex);
  h.created_unix_ns = created_unix_ns;
  h.virtual_now_s = 0;
  h.virtual_clock = config.clock == ClockMode::kVirtual;
  h.next_load_id = 1;
  for (std::size_t i = 0; i < config.gpus.size(); ++i) {
    s.gpus[i].params = config.gpus[i];
    initialize_dynamics(s.gpus[i]);
  }
  __atomic_store_n(&h.initialized, 1u, __ATOMIC_RELEASE);
}

StateMapping::StateMapping(const SimConfig& config, const std::string& path) : path_(path) {
  const std::size_t size = sizeof(SharedState);
  if (path_.empty()) {
    void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) fail(path_, "mmap");
    state_ = static_cast<SharedState*>(mem);
    initialize_state(*state_, config, unix_now_ns());
    return;
  }

  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) fail(path_, "open");
  // Exclusive while checking and (re)initialising; a process that comes second
  // waits here and then finds an initialised state.
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      close(fd_);
      fail(path_, "flock");
    }
  }
  struct stat st {};
  if (fstat(fd_, &st) != 0 || (static_cast<std::size_t>(st.st_size) != size && ftruncate(fd_, static_cast<off_t>(size)) != 0)) {
    const int saved = errno;
    close(fd_);
    errno = saved;
    fail(path_, "resizing the file");
  }
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mem == MAP_FAILED) {
    const int saved = errno;
    close(fd_);
    errno = saved;
    fail(path_, "mmap");
  }
  state_ = static_cast<SharedState*>(mem);
  if (static_cast<std::size_t>(st.st_size) != size || !usable(*state_, config)) {
    initialize_state(*state_, config, unix_now_ns());
    msync(mem, size, MS_ASYNC);
  }
  flock(fd_, LOCK_UN);
}

StateMapping::~StateMapping() {
  if (state_) munmap(state_, sizeof(SharedState));
  if (fd_ >= 0) close(fd_);
}

void StateMapping::repair_after_fork() {
  if (!file_backed()) init_mutex(state_->header.mutex);
}

StateLock::StateLock(SharedState& state) : mutex_(&state.header.mutex) {
  int rc = pthread_mutex_lock(mutex_);
  if (rc == EOWNERDEAD) {
    pthread_mutex_consistent(mutex_);
    rc = 0;
  }
  if (rc != 0) {
    throw SimError(Status::kState, std::string("simulator state lock is unusable (") + std::strerror(rc) +
                                       "); delete the ZEUS_SIM_STATE file and retry");
  }
}

StateLock::~StateLock() { pthread_mutex_unlock(mutex_); }

}  // namespace zeus::sim
