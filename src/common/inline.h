// Inlining hints for the hot paths whose instruction counts the performance guard holds
// (bench/perf_baseline.json): where GCC's heuristics would leave a small step out of line.
#pragma once

#if defined(__GNUC__)
#define RLFIT_ALWAYS_INLINE __attribute__((always_inline)) inline
#define RLFIT_NOINLINE __attribute__((noinline))
#else
#define RLFIT_ALWAYS_INLINE inline
#define RLFIT_NOINLINE
#endif
