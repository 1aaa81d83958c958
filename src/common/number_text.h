// Number text: the one formatter for the doubles the tools write in bulk (prediction and replay
// CSVs) and for the numbers their messages quote, and the one reader of a number cell.
// Locale-free (std::to_chars, std::from_chars).
#pragma once

#include <string>

namespace rlfit {

// Room WriteShortest needs: the longest shortest text of a double is 24 characters
// ("-2.2250738585072014e-308").
constexpr int kShortestChars = 32;

// Writes the shortest text that parses back (std::from_chars, strtod, Python's float) to
// exactly `v` at `first` and returns the end; [first, first + kShortestChars) must be writable.
// -0 is written "0" (e.g. atan2 of -0 in an Euler angle; nobody reading a CSV wants "-0").
// `v` must be finite: a non-finite value is a bug of the caller (InternalError), never text.
char* WriteShortest(char* first, double v);

// WriteShortest appended to `out`, and as a string.
void AppendShortest(std::string* out, double v);
std::string ShortestText(double v);

// A number for a message: `digits` significant digits as printf's "%.<digits>g" prints them
// ("0.001", "600", "1e+06", "inf", "nan").
std::string MessageNumber(double v, int digits = 6);

// A cell or value as a message quotes it: at most 40 bytes, bytes that are not printable ASCII
// shown as '?', in single quotes.
std::string QuoteText(const char* text);

// Reads `text`, all of it, as a decimal number into *value: an optional sign, digits with an
// optional point, an optional exponent (e or E, or Mathematica's "*^" as the datasets' .txt
// exports write it: "-9.*^-6"). Returns "" when it is one, else why not, quoting the text:
// "'abc' is not a number" (also C's hexadecimal floats such as "0x10", which strtod would read
// as 16), "'nan' is not a finite number" (also inf and a value beyond the double's range).
// An underflow reads as 0 or a denormal. `text` must not be empty (the caller names what is).
// The one reader of the recordings' cells, predict's states and controls, and its options.
std::string ReadNumberText(const char* text, double* value);

}  // namespace rlfit
