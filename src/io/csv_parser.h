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
