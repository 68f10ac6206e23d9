/* The Python wheel links GCC 12's libstdc++ statically and is built against
 * glibc 2.31 (cmake/ZeusWheel.cmake), but that libstdc++.a was compiled on
 * glibc 2.36 and refers to two things glibc added later. They are defined
 * here, hidden, so the extension loads on glibc 2.31; a newer glibc's own
 * copies are never interposed. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

/* glibc 2.32. 0 means "the process may have threads": libstdc++ then always
 * uses atomic reference counts, which is correct everywhere. */
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

/* glibc 2.36, for std::random_device("arc4random"): the same kernel entropy
 * through getrandom (glibc 2.25); like glibc's, it never returns weak bytes. */
__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
    uint32_t value = 0;
    while (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value) {
        if (errno != EINTR) abort();
    }
    return value;
}
