// Standard input, output and error (descriptors 0-2) are never reused for a
// file of ours. A program started with one of them closed (`zeus run ... >&-`)
// would otherwise get that number for the next file it opens, and everything
// meant for standard output or error (a report, a warning) would be written
// into that file: the simulator's shared state, a ledger, a log.
//
// Header-only and free of libzeus, like user_file.hpp, so that zeus, zeusd,
// zeus-sim and the simulator's libnvidia-ml share the one rule.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace zeus {

// Occupies each of descriptors 0-2 that is closed with /dev/null opened
// read-only, first thing in main() (in zeus, from .preinit_array: a shared
// library may open files as it loads): no file opened later lands there, and a
// write to a closed standard output or error still fails with EBADF, as it
// would on the closed descriptor, so a report that cannot be written is
// still an error rather than silently discarded.
inline void occupy_closed_standard_descriptors() noexcept {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // The lowest free number: `fd` itself, since the lower ones are open by now.
        const int opened = ::open("/dev/null", O_RDONLY);
        if (opened > 2) ::close(opened);
    }
}

// For a library that cannot know how its host program started (the
// simulator's libnvidia-ml is loaded by any program): a descriptor it just
// opened that landed on 0-2 is moved above them (close-on-exec), the original
// closed. Returns the descriptor to keep: `fd` itself when it was above 2,
// -1 (errno set, `fd` closed) when it could not be moved, as a failed open.
inline int move_above_standard_descriptors(int fd) noexcept {
    if (fd < 0 || fd > 2) return fd;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    const int error = errno;
    ::close(fd);
    errno = error;
    return moved;
}

}  // namespace zeus
