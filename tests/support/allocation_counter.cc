#include "tests/support/allocation_counter.h"

#include <cstdlib>
#include <new>

namespace {
thread_local int active_counters = 0;
thread_local long allocations = 0;
}  // namespace

// Kept in their own translation unit: inlined into a test, GCC 12 flags the malloc/free pairing
// as a mismatched new/delete.
void* operator new(std::size_t size) {
  if (active_counters > 0) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace alsim::testing {

AllocationCounter::AllocationCounter() {
  if (active_counters++ == 0) allocations = 0;
}
AllocationCounter::~AllocationCounter() { --active_counters; }
long AllocationCounter::count() const { return allocations; }

}  // namespace alsim::testing
