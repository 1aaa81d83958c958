// Progress on stderr for long runs ("label: 3/12 episodes, 4.2 s"), shown only when stderr
// is a terminal and the user did not ask for --quiet.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace rlfit {

class Progress {
 public:
  Progress(std::string label, int total, bool quiet)
      : label_(std::move(label)), total_(total),
        enabled_(!quiet && ::isatty(::fileno(stderr)) != 0),
        start_(std::chrono::steady_clock::now()) {}
  ~Progress() {
    if (enabled_ && shown_) std::fprintf(stderr, "\n");
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Marks one more unit done and redraws the line (at most ~10 times per second).
  void Tick() {
    ++done_;
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done_ < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    shown_ = true;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r%s: %d/%d, %.1f s", label_.c_str(), done_, total_, elapsed);
    std::fflush(stderr);
  }

 private:
  std::string label_;
  int total_;
  int done_ = 0;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace rlfit
