// Hands each task's stderr to slurmstepd, so that the step's energy line can
// be written where the user reads the task's output.
//
// slurmstepd itself holds no writable end of a task's stderr (for srun it
// reads a pipe and relays it; for a batch job the task opened its file), and
// by the time of slurm_spank_task_exit the task is gone. So a socket pair is
// made before the tasks are forked; in slurm_spank_task_init each task (after
// Slurm set up its stdio, before exec) sends a duplicate of its fd 2 over it
// (SCM_RIGHTS); both ends are close-on-exec, so the user's program inherits
// nothing. slurmstepd picks the descriptors up at task exit, writes to the
// last one, and closes every one at its task's exit, so the stdio relay still
// sees its pipes close. A datagram socket pair queues up to its send buffer
// (some hundred messages), not net.unix.max_dgram_qlen, which applies to
// unconnected peers.
#pragma once

#include <map>
#include <string>

namespace zeus::slurm {

class TaskStderrRelay {
  public:
    TaskStderrRelay() = default;
    TaskStderrRelay(const TaskStderrRelay&) = delete;
    TaskStderrRelay& operator=(const TaskStderrRelay&) = delete;
    ~TaskStderrRelay();

    // Makes the socket pair; false (and nothing to relay) when it cannot.
    bool open();
    // In the task's process: sends its fd 2, tagged with its local task id.
    void send_from_task(int task_id) const;
    // In slurmstepd: the task's stderr, once it was sent (-1 if it was not);
    // the caller owns it.
    [[nodiscard]] int take(int task_id);
    // Closes whatever is still held.
    void close_all();

  private:
    void receive_pending();

    int receiver_ = -1;
    int sender_ = -1;
    std::map<int, int> received_;  // task id -> descriptor
};

// Writes the whole line to fd (a short write is retried); errors are ignored:
// a task's stderr that is gone loses only this line, never the record.
void write_line(int fd, const std::string& line);

}  // namespace zeus::slurm
