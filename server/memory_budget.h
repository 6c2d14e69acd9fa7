// The server's memory budget (--max-memory): compiled scenes and instances reserve their estimated
// bytes before they are built and return them when freed, so that a Create the server cannot
// afford fails with RESOURCE_EXHAUSTED instead of running the process out of memory.
#pragma once

#include <cstdint>
#include <mutex>

namespace alsim::server {

class MemoryBudget {
 public:
  // `limit` bytes in all; 0 = no limit (reservations are still counted).
  explicit MemoryBudget(std::uint64_t limit) : limit_(limit) {}

  // Reserves `bytes` if they fit under the limit; false (nothing reserved) if not.
  bool TryReserve(std::uint64_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (limit_ > 0 && (bytes > limit_ || used_ > limit_ - bytes)) return false;
    used_ += bytes;
    return true;
  }
  void Release(std::uint64_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    used_ -= bytes < used_ ? bytes : used_;
  }
  std::uint64_t used() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return used_;
  }
  std::uint64_t limit() const { return limit_; }

 private:
  const std::uint64_t limit_;
  std::mutex mutex_;
  std::uint64_t used_ = 0;
};

}  // namespace alsim::server
