# Helpers that give every alsim target the same flags.

# Warnings as errors on our own code only (generated protobuf code is compiled without them).
function(alsim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Werror)
  # GCC's -Wmaybe-uninitialized misfires inside Eigen's evaluators at the sanitizers' -O1
  # (AssignEvaluator.h: 'srcEvaluator' may be used uninitialized); Release builds keep it.
  if(ALSIM_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
endfunction()

# civetweb (behind prometheus-cpp's Exposer) starts its threads with 100 KiB stacks; with a
# BLAS or METIS that has large static TLS that overflows on the first scrape
# (shared/research/deps-probe.md, pitfall 1). Every executable that may run an Exposer links
# this shim, which puts a 1 MiB floor under pthread_attr_setstacksize.
add_library(alsim_civetweb_stack_shim OBJECT ${CMAKE_CURRENT_LIST_DIR}/civetweb_stack_shim.cc)
target_link_libraries(alsim_civetweb_stack_shim PUBLIC ${CMAKE_DL_LIBS})
alsim_warnings(alsim_civetweb_stack_shim)

# Under AddressSanitizer, LeakSanitizer's suppressions of leaks inside Debian's libraries, built
# into every executable (so processes that tests start, such as the CLI, carry them too).
if(ALSIM_SANITIZE STREQUAL "address")
  add_library(alsim_lsan_suppressions OBJECT ${CMAKE_CURRENT_LIST_DIR}/lsan_suppressions.cc)
  alsim_warnings(alsim_lsan_suppressions)
endif()

function(alsim_executable name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE alsim_civetweb_stack_shim)
  if(TARGET alsim_lsan_suppressions)
    target_link_libraries(${name} PRIVATE alsim_lsan_suppressions)
  endif()
  alsim_warnings(${name})
endfunction()
