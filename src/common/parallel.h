// ParallelFor: runs fn(i) for i in [0, n) on a few std::threads (batch predictions, batch arena
// queries). Each index runs exactly once; which thread runs it does not change its result.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rlfit {

// Threads to use for `requested` (0 = every core std::thread reports, at least 1), never more
// than the `n` items.
inline int ThreadCount(int requested, int n) {
  int threads = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(threads, n));
}

// Calls fn(i) for every i in [0, n), indices handed out one at a time from a shared counter (so
// long and short items balance). The first exception thrown by fn is rethrown here after every
// thread has stopped; the remaining indices are then skipped.
template <typename Fn>
void ParallelFor(int n, int threads, const Fn& fn) {
  if (n <= 0) return;
  const int count = ThreadCount(threads, n);
  if (count == 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (int i = next++; i < n && !failed; i = next++) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(count - 1);
  for (int t = 1; t < count; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace rlfit
