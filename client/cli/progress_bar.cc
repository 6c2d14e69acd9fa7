#include "client/cli/progress_bar.h"

#include <cstdio>

namespace alsim::cli {

ProgressBar::ProgressBar(std::int64_t total, bool enabled, std::string unit)
    : total_(total),
      enabled_(enabled && total > 0),
      unit_(std::move(unit)),
      start_(Clock::now()),
      next_draw_(start_) {}

void ProgressBar::Update(std::int64_t done) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now < next_draw_ && done < total_) return;
  next_draw_ = now + std::chrono::milliseconds(100);
  constexpr int kWidth = 30;
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  // \r returns to the line start and \033[K erases what a longer previous line left behind.
  std::fprintf(stderr, "\r[%s] %3d%%  %lld/%lld %s  %.0f %s/s\033[K", bar.c_str(),
               static_cast<int>(fraction * 100), static_cast<long long>(done),
               static_cast<long long>(total_), unit_.c_str(),
               elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0, unit_.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace alsim::cli
