// How long one core waits for a cache line that another core wrote last: the cost every hand-off
// between alsim's threads pays (a stage's output read by the next stage on the other thread).
//
// On the shared 2-vCPU VMs these benchmarks run on, it is not a constant: the host moves the two
// vCPUs between placements, and a dependent load of a line the other vCPU wrote took 21-25 ns in
// some periods (a shared L3, it seems), 102-132 ns in others and about 5 ns in a third (one
// physical core for both), against 4 ns for a line the same core wrote (2026-11-25). humanoid100
// at 2 threads follows it (BENCHMARKS.md, "Two placements of the two vCPUs" and "A third
// placement"), so solver_bench prints it beside every 2-thread ratio.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace alsim {

struct CrossCoreLatency {
  bool measured = false;  // false when the process cannot run on CPUs 0 and 1
  double same_core_ns = 0;
  double other_core_ns = 0;
};

namespace cross_core_detail {

inline bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// One line per entry, so each load of the chase is a line of its own.
struct alignas(64) ChainLink {
  int next = 0;
};

}  // namespace cross_core_detail

// Medians over `rounds` of a pointer chase through 4096 lines (256 KB, inside L2) in random
// order: once right after this thread wrote the chain, once right after a thread on the other CPU
// did. Each load's address comes from the previous load, so the chase measures latency, not the
// bandwidth that prefetchers would give a streaming read. The calling thread is pinned to CPU 0
// while it runs and unpinned after.
inline CrossCoreLatency MeasureCrossCoreLatency(int rounds = 31) {
  using cross_core_detail::ChainLink;
  using cross_core_detail::PinToCpu;
  CrossCoreLatency result;
  cpu_set_t original;
  if (pthread_getaffinity_np(pthread_self(), sizeof original, &original) != 0) return result;
  if (!CPU_ISSET(0, &original) || !CPU_ISSET(1, &original) || !PinToCpu(0)) return result;

  constexpr int kLinks = 4096;
  std::vector<ChainLink> chain(kLinks);
  std::vector<int> order(kLinks);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  auto write_chain = [&] {
    for (int i = 0; i < kLinks; ++i) chain[order[i]].next = order[(i + 1) % kLinks];
  };
  auto chase_ns = [&] {
    const auto start = std::chrono::steady_clock::now();
    int at = order[0];
    for (int i = 0; i < kLinks; ++i) at = chain[at].next;
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    return ns / kLinks + (at < 0 ? 1 : 0);  // `at` is used, so the chase is not optimized away
  };
  std::vector<double> same, other;
  bool pinned_other = true;
  for (int r = 0; r < rounds && pinned_other; ++r) {
    write_chain();
    same.push_back(chase_ns());
    std::thread writer([&] {
      pinned_other = PinToCpu(1);
      write_chain();
    });
    writer.join();
    other.push_back(chase_ns());
  }
  pthread_setaffinity_np(pthread_self(), sizeof original, &original);
  if (!pinned_other) return result;
  std::sort(same.begin(), same.end());
  std::sort(other.begin(), other.end());
  result.measured = true;
  result.same_core_ns = same[same.size() / 2];
  result.other_core_ns = other[other.size() / 2];
  return result;
}

}  // namespace alsim
