// Cache-line placement for data that threads write at the same time.
//
// Two threads writing different values that share one 64-byte line make the line travel between
// their cores on every write ("false sharing"). Where the two CPUs are far apart (the transfer
// time is measured by bench/cross_core_latency.h; figures in BENCHMARKS.md) that costs more than
// the arithmetic of a solver iteration, so values written in every iteration by different islands
// or subsystems are kept on lines of their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace alsim {

constexpr std::size_t kCacheLineBytes = 64;
constexpr int kDoublesPerCacheLine = static_cast<int>(kCacheLineBytes / sizeof(double));

// n rounded up to a whole number of cache lines of doubles.
constexpr long RoundUpToCacheLine(long n) {
  return (n + kDoublesPerCacheLine - 1) / kDoublesPerCacheLine * kDoublesPerCacheLine;
}

// A growable array of doubles whose element 0 starts a cache line, so that an offset that is a
// multiple of kDoublesPerCacheLine starts one too. Its values do not survive Resize.
class CacheLineDoubles {
 public:
  void Reserve(std::size_t n) { storage_.reserve(n + kDoublesPerCacheLine - 1); }
  void Resize(std::size_t n) {
    if (storage_.size() < n + kDoublesPerCacheLine - 1) {
      storage_.resize(n + kDoublesPerCacheLine - 1);
    }
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    const std::size_t skip = (kCacheLineBytes - address % kCacheLineBytes) % kCacheLineBytes;
    data_ = storage_.data() + skip / sizeof(double);
  }
  double* data() { return data_; }
  const double* data() const { return data_; }
  double& operator[](std::size_t i) { return data_[i]; }
  double operator[](std::size_t i) const { return data_[i]; }

 private:
  std::vector<double> storage_;
  double* data_ = nullptr;
};

}  // namespace alsim
