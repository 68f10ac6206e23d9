# Warnings and sanitizers for every target of this project (not for imported ones).
add_library(zeus_compile_options INTERFACE)
target_compile_options(zeus_compile_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
  -Woverloaded-virtual -Wformat=2 -Wimplicit-fallthrough)
if(ZEUS_WERROR)
  target_compile_options(zeus_compile_options INTERFACE -Werror)
endif()
if(ZEUS_SANITIZE)
  target_compile_options(zeus_compile_options INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(zeus_compile_options INTERFACE -fsanitize=address,undefined)
endif()
if(ZEUS_FUZZ)
  # Coverage instrumentation for libFuzzer plus ASan/UBSan in every project
  # target; only the fuzz executables link the fuzzer runtime itself.
  target_compile_options(zeus_compile_options INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(zeus_compile_options INTERFACE -fsanitize=address,undefined)
endif()
