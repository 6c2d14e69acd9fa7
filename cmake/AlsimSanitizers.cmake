# Sanitizer builds apply to everything we compile (our code and generated code), so that
# instrumented and uninstrumented frames do not mix within our own binaries.
if(ALSIM_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(ALSIM_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT ALSIM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ALSIM_SANITIZE must be '', 'address' or 'thread', not '${ALSIM_SANITIZE}'")
endif()
