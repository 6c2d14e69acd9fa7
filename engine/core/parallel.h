// The engine's parallel loop: tbb::parallel_for with the fork/join ordering made visible to
// ThreadSanitizer.
//
// Debian's libtbb is not built with TSan, so the synchronisation by which its tasks start after
// the spawning thread's writes and finish before parallel_for returns is invisible to it: every
// task's access to data prepared before the loop would be reported as a race. In TSan builds the
// loop therefore releases a token before the fork, each task acquires it on entry and releases a
// second token on exit, and the caller acquires that after the join: exactly TBB's guarantees,
// so TSan still reports genuine races between tasks. Elsewhere the annotations compile to nothing.
#pragma once

#include <cstddef>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#define ALSIM_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#define ALSIM_TSAN_RELEASE(addr) __tsan_release(addr)
#else
#define ALSIM_TSAN_ACQUIRE(addr) static_cast<void>(addr)
#define ALSIM_TSAN_RELEASE(addr) static_cast<void>(addr)
#endif

namespace alsim {

// Calls body(i) for i in [begin, end) on TBB's threads, `grain` indices per task at least. The
// body must only write data no other index touches.
// The fork token has one fixed address, so a task acquires it before it reads anything on the
// spawning thread's stack (its own closure included): with a token on that stack, the read of
// the token's address itself came first and raced with older writes to the same stack memory.
inline char* ParallelForkToken() {
  static char token = 0;
  return &token;
}

template <class Body>
void ParallelFor(int begin, int end, int grain, const Body& body) {
  char join = 0;
  ALSIM_TSAN_RELEASE(ParallelForkToken());
  tbb::parallel_for(tbb::blocked_range<int>(begin, end, grain),
                    [&](const tbb::blocked_range<int>& range) {
                      ALSIM_TSAN_ACQUIRE(ParallelForkToken());
                      for (int i = range.begin(); i < range.end(); ++i) body(i);
                      ALSIM_TSAN_RELEASE(&join);
                    });
  ALSIM_TSAN_ACQUIRE(&join);
}

// Runs fn() on exactly `threads` TBB threads (the caller's included). global_control caps TBB's
// workers (also below the core count); the arena gives `threads` slots, so counts above the core
// count still run that many threads (how determinism across counts is tested). An arena is
// needed, not global_control alone: the calling thread's implicit arena keeps the concurrency
// it had when first used, so a later, larger cap would not reach it.
template <class Fn>
void RunWithThreads(int threads, const Fn& fn) {
  const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                        static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  arena.execute(fn);
}

}  // namespace alsim
