# The fuzz targets of tests/fuzz in the same tree as everything else (ALSIM_BUILD_FUZZERS,
# docs/fuzzing.md). The shipped programs, the tests and the benchmarks are built as usual; the
# fuzz targets link instrumented copies of our libraries, compiled a second time from the same
# sources with the flags below, so that the fuzzers see coverage of our code and the sanitizers
# check it while everything else in the tree stays uninstrumented.

# libFuzzer's coverage (-fsanitize=fuzzer-no-link), AddressSanitizer and UndefinedBehaviorSanitizer
# at -O1, asserts on (-UNDEBUG undoes Release's -DNDEBUG), line tables for the reports' stacks.
# UBSan's pointer checks (alignment, null, object-size, pointer-overflow) are left out: they
# doubled the instrumented copies' compile time (Eigen's and the generated code's every pointer)
# and mostly restate ASan, which reports a null dereference (SEGV) and an access past an
# allocation; what goes unreported is a misaligned access, a member call through null that reads
# nothing, an overrun inside one object and pointer arithmetic that wraps (docs/fuzzing.md).
set(ALSIM_FUZZ_COMPILE_OPTIONS
  -O1 -UNDEBUG -gline-tables-only -fno-omit-frame-pointer
  -fsanitize=fuzzer-no-link,address,undefined
  -fno-sanitize=alignment,null,object-size,pointer-overflow -fno-sanitize-recover=undefined)
set(ALSIM_FUZZ_LINK_OPTIONS -fsanitize=address,undefined)

# alsim_fuzz_copy(NEW ORIGINAL [RENAME old new ...]): NEW is ORIGINAL (a static library or an
# executable) built again from the same sources with ALSIM_FUZZ_COMPILE_OPTIONS; its include
# directories, definitions, options and libraries are ORIGINAL's, with each library `old` named
# after RENAME replaced by `new` (alsim_engine by its copy, say). Read at the time of the call, so
# call it after ORIGINAL's directory is added.
function(alsim_fuzz_copy new original)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "RENAME")
  get_target_property(type ${original} TYPE)
  get_target_property(source_dir ${original} SOURCE_DIR)
  get_target_property(original_sources ${original} SOURCES)
  set(sources)
  foreach(source IN LISTS original_sources)
    if(NOT source MATCHES "\\.(cc|cpp|cxx|c)$")
      continue()  # .proto and headers: nothing to compile
    endif()
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir})
    list(APPEND sources ${source})
  endforeach()
  if(type STREQUAL "STATIC_LIBRARY")
    add_library(${new} STATIC EXCLUDE_FROM_ALL ${sources})
  elseif(type STREQUAL "EXECUTABLE")
    add_executable(${new} EXCLUDE_FROM_ALL ${sources})
  else()
    message(FATAL_ERROR "alsim_fuzz_copy: ${original} is a ${type}")
  endif()
  foreach(property INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES
                   LINK_LIBRARIES LINK_OPTIONS INTERFACE_INCLUDE_DIRECTORIES
                   INTERFACE_SYSTEM_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS
                   INTERFACE_COMPILE_OPTIONS INTERFACE_LINK_LIBRARIES)
    get_target_property(value ${original} ${property})
    if(NOT value)
      continue()
    endif()
    set(pairs ${arg_RENAME})
    while(pairs)
      list(POP_FRONT pairs old replacement)
      # A library stands alone in the list or inside $<LINK_ONLY:...>.
      list(TRANSFORM value REPLACE "^${old}$" "${replacement}")
      list(TRANSFORM value REPLACE "^\\$<LINK_ONLY:${old}>$" "$<LINK_ONLY:${replacement}>")
    endwhile()
    set_property(TARGET ${new} PROPERTY ${property} "${value}")
  endforeach()
  target_compile_options(${new} PRIVATE ${ALSIM_FUZZ_COMPILE_OPTIONS})
  # clang-tidy (scripts/tidy.sh) reads each source once, with its uninstrumented command.
  set_target_properties(${new} PROPERTIES EXPORT_COMPILE_COMMANDS OFF)
  target_link_options(${new} PRIVATE ${ALSIM_FUZZ_LINK_OPTIONS})
endfunction()

# alsim_fuzz_copy_libraries(ROOT... [EXCEPT lib...]): an instrumented copy (alsim_fuzz_copy) of
# each ROOT and of every static library of ours that they link, directly or not (alsim_batch_step
# under alsim_server_lib, say), each named alsim_fuzz_<name without alsim_> and linking the others'
# copies, so that no uninstrumented object of ours reaches a fuzz target. EXCEPT: libraries linked
# as they are.
function(alsim_fuzz_copy_libraries)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "EXCEPT")
  set(todo ${arg_UNPARSED_ARGUMENTS})
  set(ours)
  while(todo)
    list(POP_FRONT todo library)
    if(library IN_LIST ours OR library IN_LIST arg_EXCEPT)
      continue()
    endif()
    list(APPEND ours ${library})
    get_target_property(links ${library} LINK_LIBRARIES)
    if(NOT links)
      continue()
    endif()
    foreach(link IN LISTS links)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" link "${link}")
      if(NOT TARGET "${link}")
        continue()
      endif()
      get_target_property(type ${link} TYPE)
      get_target_property(imported ${link} IMPORTED)
      get_target_property(dir ${link} SOURCE_DIR)
      cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${dir}" NORMALIZE inside)
      if(type STREQUAL "STATIC_LIBRARY" AND NOT imported AND inside)
        list(APPEND todo ${link})
      endif()
    endforeach()
  endwhile()
  set(renames)
  foreach(library IN LISTS ours)
    string(REGEX REPLACE "^alsim_" "" short ${library})
    list(APPEND renames ${library} alsim_fuzz_${short})
  endforeach()
  foreach(library IN LISTS ours)
    string(REGEX REPLACE "^alsim_" "" short ${library})
    alsim_fuzz_copy(alsim_fuzz_${short} ${library} RENAME ${renames})
  endforeach()
endfunction()
