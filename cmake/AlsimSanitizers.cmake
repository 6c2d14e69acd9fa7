# Sanitizer builds apply to everything we compile (our code and generated code), so that
# instrumented and uninstrumented frames do not mix within our own binaries.
if(ALSIM_SANITIZE STREQUAL "address")
  # -O1 as AddressSanitizer's documentation recommends: -O0 makes the dense oracle tests
  # (nv = 3000 scenes) ~30x slower than Release; a Debug build keeps its asserts either way.
  add_compile_options(-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(ALSIM_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT ALSIM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ALSIM_SANITIZE must be '', 'address' or 'thread', not '${ALSIM_SANITIZE}'")
endif()

# Debian's g++ links with --as-needed; clang does not, and would record in the shipped programs
# libraries that only Debian's .so files need (c-ares, re2, zlib: image_packages_test).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_link_options(LINKER:--as-needed)
endif()

# The libFuzzer targets of tests/fuzz (docs/fuzzing.md) are built in the same tree as everything
# else, with clang: ALSIM_BUILD_FUZZERS (on by default with clang outside the sanitizer builds)
# defines them, outside `all`; `make test` builds them with everything else, `cmake --build B
# --target alsim_fuzzers` alone. They link instrumented copies of our libraries (AlsimFuzz.cmake,
# tests/fuzz/CMakeLists.txt); the shipped programs, tests and benchmarks stay as they are.
set(alsim_fuzzers_default OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND ALSIM_SANITIZE STREQUAL "")
  set(alsim_fuzzers_default ON)
endif()
option(ALSIM_BUILD_FUZZERS "Build the libFuzzer targets of tests/fuzz (clang only)" ${alsim_fuzzers_default})
if(ALSIM_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ALSIM_BUILD_FUZZERS needs clang (CC=clang CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(NOT ALSIM_SANITIZE STREQUAL "")
    message(FATAL_ERROR "ALSIM_BUILD_FUZZERS brings its own sanitizers; leave ALSIM_SANITIZE empty")
  endif()
endif()
# ALSIM_FUZZ, the former whole-tree instrumentation, is gone: a tree that had it (build-fuzz/)
# drops it and builds as above.
if(DEFINED CACHE{ALSIM_FUZZ})
  message(STATUS "ALSIM_FUZZ is gone (ALSIM_BUILD_FUZZERS, docs/fuzzing.md): dropped from the cache")
  unset(ALSIM_FUZZ CACHE)
endif()
