#include "state_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>

#include "errors.h"
#include "gpu_params_check.h"
#include "physics.h"
#include "sim_clock.h"
#include "zeus/platform/standard_descriptors.hpp"

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
  if (h.magic != kStateMagic || h.layout_version != kStateLayoutVersion || h.total_size != sizeof(SharedState) ||
      h.initialized != 1 || h.config_hash != config.hash || h.gpu_count != config.gpus.size() ||
      std::strncmp(h.boot_id, boot_id(), sizeof h.boot_id) != 0) {
    return false;
  }
  // A matching header over damaged parameters must not reach the physics.
  for (std::uint32_t i = 0; i < h.gpu_count; ++i) {
    if (invalid_gpu_params_reason(s.gpus[i].params)) return false;
  }
  return true;
}

// Open-file-description locks on the whole file. Unlike flock(2), converting
// a held lock (write -> read) is atomic, so no other opener can slip in while
// an initialiser downgrades; like flock(2), the lock belongs to the open file
// description, so a forked child shares it through the inherited fd and the
// lock lasts until the last process holding that description closes it.
// Returns false with errno set on failure (EAGAIN/EACCES: held by others).
bool ofd_lock(int fd, short type, bool wait) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  for (;;) {
    if (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) == 0) return true;
    if (errno != EINTR) return false;  // errno says why
  }
}

bool held_by_others(int error) { return error == EAGAIN || error == EACCES; }

}  // namespace

void initialize_state(SharedState& s, const SimConfig& config, std::int64_t created_unix_us) {
  std::memset(static_cast<void*>(&s), 0, sizeof s);
  StateHeader& h = s.header;
  h.magic = kStateMagic;
  h.layout_version = kStateLayoutVersion;
  h.total_size = sizeof(SharedState);
  h.config_hash = config.hash;
  h.gpu_count = static_cast<std::uint32_t>(config.gpus.size());
  init_mutex(h.mutex);
  h.created_unix_us = created_unix_us;
  h.created_monotonic_ns = monotonic_now_ns();
  std::strncpy(h.boot_id, boot_id(), sizeof h.boot_id - 1);
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
  if (path_.empty()) {
    void* mem = mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) fail(path_, "mmap");
    state_ = static_cast<SharedState*>(mem);
    initialize_state(*state_, config, unix_now_us());
    return;
  }
  // Never on 0-2: a host program started with one of them closed would write its output into the state.
  fd_ = zeus::move_above_standard_descriptors(open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (fd_ < 0) fail(path_, "open");
  try {
    attach(config);
  } catch (...) {
    if (state_) munmap(state_, sizeof(SharedState));
    state_ = nullptr;
    close(fd_);  // also drops our lock
    fd_ = -1;
    throw;
  }
}

// Every attached process holds a read lock for as long as it is mapped, so
// getting the write lock proves that nobody else uses the state and only then
// may it be (re)initialised. A process that cannot get it waits for a read
// lock (an initialiser may be at work) and must then find the state usable.
void StateMapping::attach(const SimConfig& config) {
  if (ofd_lock(fd_, F_WRLCK, /*wait=*/false)) return attach_alone(config);
  if (!held_by_others(errno)) fail(path_, "locking");
  if (!ofd_lock(fd_, F_RDLCK, /*wait=*/true)) fail(path_, "locking");
  if (map_if_usable(config)) return;
  // Those holding it when we tried may have left since.
  if (ofd_lock(fd_, F_WRLCK, /*wait=*/false)) return attach_alone(config);
  if (!held_by_others(errno)) fail(path_, "locking");
  throw SimError(Status::kState, "zeus-sim state file " + path_ +
                                     " is in use by another process with a different configuration; use another " +
                                     "ZEUS_SIM_STATE or stop the other processes");
}

bool StateMapping::map_if_usable(const SimConfig& config) {
  struct stat st {};
  if (fstat(fd_, &st) != 0) fail(path_, "fstat");
  // Never resize here: others may have the file mapped.
  if (static_cast<std::size_t>(st.st_size) != sizeof(SharedState)) return false;
  map();
  if (usable(*state_, config)) return true;
  munmap(state_, sizeof(SharedState));
  state_ = nullptr;
  return false;
}

void StateMapping::attach_alone(const SimConfig& config) {
  struct stat st {};
  if (fstat(fd_, &st) != 0) fail(path_, "fstat");
  refuse_foreign_file(st);
  const bool right_size = static_cast<std::size_t>(st.st_size) == sizeof(SharedState);
  if (!right_size && ftruncate(fd_, static_cast<off_t>(sizeof(SharedState))) != 0) fail(path_, "resizing the file");
  map();
  if (!right_size || !usable(*state_, config)) {
    initialize_state(*state_, config, unix_now_us());
    msync(state_, sizeof(SharedState), MS_ASYNC);
  }
  // Atomic downgrade: from here on others may attach next to us.
  if (!ofd_lock(fd_, F_RDLCK, /*wait=*/false)) fail(path_, "downgrading the lock");
}

// A non-empty file that does not start with the state's magic is someone
// else's data (ZEUS_SIM_STATE set to the wrong path): never overwrite it. An
// unfinished state (all zeros: a crash before the header was written) is ours.
void StateMapping::refuse_foreign_file(const struct stat& st) const {
  if (st.st_size == 0) return;
  std::uint64_t magic = 0;
  const ssize_t got = pread(fd_, &magic, sizeof magic, 0);
  if (got == static_cast<ssize_t>(sizeof magic) && (magic == kStateMagic || magic == 0)) return;
  throw SimError(Status::kState, "ZEUS_SIM_STATE names " + path_ + ", which is not a zeus-sim state file (" +
                                     std::to_string(st.st_size) +
                                     " bytes of other data); it is left as it is: point ZEUS_SIM_STATE at a new "
                                     "file (or an old state file), or delete this one if it is yours to delete");
}

void StateMapping::map() {
  void* mem = mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mem == MAP_FAILED) fail(path_, "mmap");
  state_ = static_cast<SharedState*>(mem);
}

StateMapping::~StateMapping() {
  if (state_) munmap(state_, sizeof(SharedState));
  // Only close, never unlock explicitly: after a fork the parent and the child
  // share the lock, and an unlock by either would release it for both.
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
