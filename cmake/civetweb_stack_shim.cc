// Raises civetweb's 100 KiB worker-thread stacks to at least 1 MiB.
//
// glibc carves every loaded library's static TLS out of each thread's stack; with OpenBLAS
// (60 KiB TLS) plus METIS (29 KiB, via CHOLMOD) the Prometheus exposer's civetweb threads overflow
// on their first request. A definition in the executable takes precedence over libpthread's, so
// libcivetweb's calls come here. See shared/research/deps-probe.md, pitfall 1.
#include <dlfcn.h>
#include <pthread.h>

#include <cstddef>

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t size) {
  using SetStackSize = int (*)(pthread_attr_t*, size_t);
  static const auto real_setstacksize =
      reinterpret_cast<SetStackSize>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  constexpr size_t kMinimumStackBytes = size_t{1} << 20;
  return real_setstacksize(attr, size < kMinimumStackBytes ? kMinimumStackBytes : size);
}
