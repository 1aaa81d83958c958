// Stand-in for MSVC's <intrin.h>, which Lobot's bit_packing.h includes for __lzcnt (count of
// leading zero bits of a 32-bit word, 32 for zero): GCC's builtin, for the Lobot comparison only.
#pragma once

#include <cstdint>

inline unsigned int __lzcnt(unsigned int n) { return n == 0 ? 32u : __builtin_clz(n); }
