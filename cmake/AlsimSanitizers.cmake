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
