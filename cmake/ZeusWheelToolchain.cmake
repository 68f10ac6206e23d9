# The toolchain of the Python wheel (scripts/build-wheel.sh): the build
# machine's GCC 12 compiling against an older system root (a Debian 11 root
# made by scripts/debian-root.sh: glibc 2.31's headers and libraries), so the
# extension's glibc symbol versions stop at 2.31 (manylinux_2_31). Programs
# (cmake, python) are the build machine's; libraries come from the root only.
if(NOT ZEUS_WHEEL_SYSROOT OR NOT EXISTS "${ZEUS_WHEEL_SYSROOT}/usr/include/stdio.h")
  message(FATAL_ERROR "ZEUS_WHEEL_SYSROOT='${ZEUS_WHEEL_SYSROOT}' is not an unpacked Debian root with libc6-dev; "
                      "scripts/build-wheel.sh makes one (scripts/debian-root.sh bullseye libc6-dev ...)")
endif()
set(CMAKE_SYSROOT "${ZEUS_WHEEL_SYSROOT}")
# try_compile projects read this file again: they need the variable too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ZEUS_WHEEL_SYSROOT)
# GCC also searches libraries and crt*.o relative to its own prefix
# (/usr/lib/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu), which is this
# machine's glibc 2.36 and not under --sysroot: the root's come first.
set(_zeus_root_libs "-B${ZEUS_WHEEL_SYSROOT}/usr/lib/x86_64-linux-gnu/ -L${ZEUS_WHEEL_SYSROOT}/usr/lib/x86_64-linux-gnu -L${ZEUS_WHEEL_SYSROOT}/lib/x86_64-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_zeus_root_libs}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_zeus_root_libs}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_zeus_root_libs}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
# Python's headers and nanobind's CMake package live on the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
