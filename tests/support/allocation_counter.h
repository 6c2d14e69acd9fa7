// Counts heap allocations (calls to the global operator new) made by the current thread, to test
// that a step allocates nothing. Linking this file replaces the global operator new and delete.
#pragma once

namespace alsim::testing {

// Counts this thread's allocations from construction until destruction.
class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;

  long count() const;
};

}  // namespace alsim::testing
