// fast-cpp-csv-parser (libfccp-dev), included once for the project: its strncpy of file
// names trips GCC's -Wstringop-truncation at every use, which says nothing about our code.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#include <libfccp/csv.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace rlfit {

// The comma-separated cells on 1-based line `line` of `size` bytes of text (0 past its end), up
// to its end or a NUL byte, where fast-cpp-csv-parser ends a line too: a too_few_columns
// error's place, the first missing cell being the next column.
inline int CellsOnLine(const char* data, std::size_t size, long long line) {
  const char* p = data;
  const char* end = data + size;
  for (long long l = 1; l < line && p < end; ++l) {
    const void* newline = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    p = newline == nullptr ? end : static_cast<const char*>(newline) + 1;
  }
  if (p >= end) return 0;
  const void* newline = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  const char* line_end = newline == nullptr ? end : static_cast<const char*>(newline);
  if (const void* nul = std::memchr(p, '\0', static_cast<std::size_t>(line_end - p)))
    line_end = static_cast<const char*>(nul);
  return 1 + static_cast<int>(std::count(p, line_end, ','));
}

}  // namespace rlfit
