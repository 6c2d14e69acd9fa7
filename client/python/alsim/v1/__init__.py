"""Generated stubs of proto/alsim/v1 (built by CMake; not kept in git)."""
