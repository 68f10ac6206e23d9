# ZEUS_WHEEL: only the Python extension, self-contained and portable, for
# scripts/build-wheel.sh (docs/python.md, "How the wheel is built"):
# - libzeus is static inside the extension (no second copy of it);
# - fmt and nlohmann/json are header-only, taken from the build machine
#   (ZEUS_WHEEL_HEADERS) because the Debian 11 root's are too old;
# - libcurl is not linked: the HTTP client loads libcurl.so.4 on first use
#   (src/platform/curl_api.cpp), with a clear error where it is missing;
# - libstdc++ is static (conda's older libstdc++ lacks GLIBCXX_3.4.30);
#   libgcc_s stays dynamic: it is on every glibc system and on manylinux's
#   allow-list, while GCC 12's libgcc_eh.a needs glibc 2.35's _dl_find_object.
# The servers, the CLI, the tests and their dependencies (Boost, OpenSSL,
# SOCI, libpq, toml++, CLI11) are not configured at all.
if(NOT ZEUS_BUILD_PYTHON OR ZEUS_BUILD_TESTS OR ZEUS_BUILD_BENCHMARKS)
  message(FATAL_ERROR "ZEUS_WHEEL needs ZEUS_BUILD_PYTHON=ON, ZEUS_BUILD_TESTS=OFF and ZEUS_BUILD_BENCHMARKS=OFF "
                      "(pyproject.toml sets them; use scripts/build-wheel.sh)")
endif()

set(ZEUS_WHEEL_HEADERS "/usr/include" CACHE PATH
    "Directory with the header-only libraries fmt/ and nlohmann/ for ZEUS_WHEEL (the build machine's)")
set(_zeus_wheel_include "${PROJECT_BINARY_DIR}/wheel-include")
file(MAKE_DIRECTORY "${_zeus_wheel_include}")
# Only these two folders, not all of the build machine's /usr/include: its
# glibc headers (2.36) must not shadow the root's.
foreach(lib fmt nlohmann)
  if(NOT EXISTS "${ZEUS_WHEEL_HEADERS}/${lib}")
    message(FATAL_ERROR "no ${ZEUS_WHEEL_HEADERS}/${lib}: install libfmt-dev and nlohmann-json3-dev "
                        "(scripts/setup.sh) or set ZEUS_WHEEL_HEADERS")
  endif()
  file(CREATE_LINK "${ZEUS_WHEEL_HEADERS}/${lib}" "${_zeus_wheel_include}/${lib}" SYMBOLIC)
endforeach()
add_library(fmt::fmt INTERFACE IMPORTED)
set_target_properties(fmt::fmt PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_zeus_wheel_include}"
  INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_zeus_wheel_include}")

# libcurl's headers (for its types and option numbers) from the root; no library.
find_path(ZEUS_CURL_INCLUDE_DIR curl/curl.h REQUIRED)
add_library(CURL::libcurl INTERFACE IMPORTED)
set_target_properties(CURL::libcurl PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${ZEUS_CURL_INCLUDE_DIR}"
  INTERFACE_COMPILE_DEFINITIONS ZEUS_CURL_DLOPEN=1)

set(ZEUS_LIBRARY_TYPE STATIC)
add_link_options(-static-libstdc++)
