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
#include <string>

#include "src/common/error.h"

namespace rlfit {

// The comma-separated cells on 1-based line `line` of `size` bytes of text (0 past its end), up
// to its end or a NUL byte, where fast-cpp-csv-parser ends a line too.
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

// The error of a too_few_columns row `row` (its 1-based line in the `size` bytes of `data`):
// the first missing cell's column and the row's count, against `expected` cells "like `what`"
// ("the first row", "the header"). The one message of every CSV reader of the project.
inline InputError TooFewColumns(const std::string& name, int row, const char* data,
                                std::size_t size, std::size_t expected, const char* what) {
  const int have = CellsOnLine(data, size, row);
  return InputError(name, row, have + 1,
                    "too few columns (" + std::to_string(have) + "), expected " +
                        std::to_string(expected) + " like " + what);
}

}  // namespace rlfit
