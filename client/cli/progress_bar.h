// A one-line progress bar on stderr for long CLI work (alsim run, alsim bench).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace alsim::cli {

// Redrawn at most every 100 ms, so its cost per update is one clock read; disabled (e.g. when
// stderr is not a terminal) it draws nothing. `unit` names what is counted ("steps").
class ProgressBar {
 public:
  ProgressBar(std::int64_t total, bool enabled, std::string unit);
  void Update(std::int64_t done);
  void Clear();  // erases the bar so that what follows starts on a clean line

 private:
  using Clock = std::chrono::steady_clock;
  std::int64_t total_;
  bool enabled_;
  std::string unit_;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point next_draw_;
};

}  // namespace alsim::cli
