// Inlining hints for the hot paths whose instruction counts the performance guard holds
// (bench/perf_baseline.json): where GCC's heuristics would leave a small step out of line.
#pragma once

#if defined(__GNUC__)
#define RLFIT_ALWAYS_INLINE __attribute__((always_inline)) inline
#define RLFIT_NOINLINE __attribute__((noinline))
// A function of its arguments' values alone (it reads and writes no memory), for a helper kept
// out of line on a rare path: GCC may then keep a loop's invariant loads out of the loop across
// calls to it, which an unknown call forbids.
#define RLFIT_CONST __attribute__((const))
#else
#define RLFIT_ALWAYS_INLINE inline
#define RLFIT_NOINLINE
#define RLFIT_CONST
#endif
