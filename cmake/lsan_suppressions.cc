// LeakSanitizer's built-in suppressions for the ASan build (cmake/AlsimTargets.cmake): leaks in
// Debian's uninstrumented libraries, not in alsim.
extern "C" const char* __lsan_default_suppressions();

extern "C" const char* __lsan_default_suppressions() {
  // c-ares, gRPC's DNS resolver, keeps a 10-byte allocation per resolved name at exit.
  return "leak:libcares.so\n";
}
