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
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
# Python's headers and nanobind's CMake package live on the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
