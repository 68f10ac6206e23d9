// Where the SharedState lives. With a path (ZEUS_SIM_STATE) it is a file mapped
// MAP_SHARED, so every process naming the same file sees the same GPUs; without
// one it is private anonymous memory. Every process attached to the file holds
// a read lock on it (an open-file-description lock, shared with forked
// children); the file is (re)initialised only under the write lock, i.e. only
// when nobody else is attached, so concurrent first opens are safe and a live
// state is never wiped. Opening a file that others use with a different
// configuration fails instead. Mutations are guarded by a process-shared robust
// mutex stored inside the mapping.
#pragma once

#include <sys/stat.h>

#include <string>

#include "config.h"
#include "shared_state.h"

namespace zeus::sim {

class StateMapping {
 public:
  // Throws SimError(kState) with the path and the failing system call, or when
  // the file is in use by processes with another configuration.
  StateMapping(const SimConfig& config, const std::string& path);
  ~StateMapping();
  StateMapping(const StateMapping&) = delete;
  StateMapping& operator=(const StateMapping&) = delete;

  SharedState& state() { return *state_; }
  bool file_backed() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

  // In a forked child: a private state was copied with the parent's mutex,
  // possibly held by a parent thread that does not exist here.
  void repair_after_fork();

 private:
  void attach(const SimConfig& config);
  // With the write lock: resize, map, initialise if needed, downgrade.
  void attach_alone(const SimConfig& config);
  void refuse_foreign_file(const struct stat& st) const;
  // With a read lock: maps the state if it was made by this configuration.
  bool map_if_usable(const SimConfig& config);
  void map();

  std::string path_;
  int fd_ = -1;
  SharedState* state_ = nullptr;
};

// RAII lock of the state's robust mutex. If the previous owner died while
// holding it (EOWNERDEAD), the state is marked consistent and used as is: every
// update is a few stores of plain numbers, so the worst case is one lost step.
class StateLock {
 public:
  explicit StateLock(SharedState& state);
  ~StateLock();
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  pthread_mutex_t* mutex_;
};

// Fills a fresh state from the configuration (also used by unit tests on
// plain memory).
void initialize_state(SharedState& state, const SimConfig& config, std::int64_t created_unix_us);

}  // namespace zeus::sim
