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

# Fuzzing build (tests/fuzz, `make fuzz`): clang's libFuzzer. Our code (engine, server, generated
# protobuf code) gets coverage instrumentation for libFuzzer plus ASan and UBSan; the fuzz targets
# link libFuzzer's main with -fsanitize=fuzzer (tests/fuzz/CMakeLists.txt), every other program
# (alsim-scene-compiler, which the RPC fuzzers start) only the sanitizer runtimes. Debian's
# libraries (gRPC, protobuf, MuJoCo, TBB) stay uninstrumented. Asserts stay on (Debug) at -O1.
# alsim-scene-compiler gets the sanitizer builds' sandbox (ALSIM_SANITIZED, server/CMakeLists.txt).
option(ALSIM_FUZZ "Build the libFuzzer targets of tests/fuzz (clang only)" OFF)
if(ALSIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ALSIM_FUZZ needs clang (CC=clang CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(NOT ALSIM_SANITIZE STREQUAL "")
    message(FATAL_ERROR "ALSIM_FUZZ brings its own sanitizers; leave ALSIM_SANITIZE empty")
  endif()
  add_compile_options(-O1 -g -fno-omit-frame-pointer
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
