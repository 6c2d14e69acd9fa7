# Helpers that give every alsim target the same flags.

# Warnings as errors on our own code only (generated protobuf code is compiled without them).
function(alsim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Werror)
endfunction()

# civetweb (behind prometheus-cpp's Exposer) starts its threads with 100 KiB stacks; with a
# BLAS or METIS that has large static TLS that overflows on the first scrape
# (shared/research/deps-probe.md, pitfall 1). Every executable that may run an Exposer links
# this shim, which puts a 1 MiB floor under pthread_attr_setstacksize.
add_library(alsim_civetweb_stack_shim OBJECT ${CMAKE_CURRENT_LIST_DIR}/civetweb_stack_shim.cc)
target_link_libraries(alsim_civetweb_stack_shim PUBLIC ${CMAKE_DL_LIBS})
alsim_warnings(alsim_civetweb_stack_shim)

function(alsim_executable name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE alsim_civetweb_stack_shim)
  alsim_warnings(${name})
endfunction()
