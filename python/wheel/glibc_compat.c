/* The Python wheel links GCC 12's libstdc++ statically and is built against
 * glibc 2.31 (cmake/ZeusWheel.cmake), but that libstdc++.a was compiled on a
 * newer glibc and refers to a variable glibc added in 2.32. Defined here,
 * hidden, so the extension loads on glibc 2.31; a newer glibc's own copy is
 * never interposed. 0 means "the process may have threads": libstdc++ then
 * always uses atomic reference counts, which is correct everywhere. */
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
