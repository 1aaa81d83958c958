// The shared number formatter (number_text.h).
#include "src/common/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "src/common/error.h"

namespace rlfit {

char* WriteShortest(char* first, double v) {
  RLFIT_CHECK(std::isfinite(v), "a non-finite value reached a number writer");
  // Adding 0.0 turns -0 into +0 and leaves every other value as it is.
  const std::to_chars_result r = std::to_chars(first, first + kShortestChars, v + 0.0);
  RLFIT_CHECK(r.ec == std::errc(), "a double's shortest text is longer than kShortestChars");
  return r.ptr;
}

void AppendShortest(std::string* out, double v) {
  char buf[kShortestChars];
  out->append(buf, WriteShortest(buf, v));
}

std::string ShortestText(double v) {
  char buf[kShortestChars];
  return std::string(buf, WriteShortest(buf, v));
}

std::string MessageNumber(double v, int digits) {
  // %.<digits>g of a finite double: at most digits + 8 characters ("-1.2345678e-308").
  char buf[64];
  const std::to_chars_result r =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, digits);
  RLFIT_CHECK(r.ec == std::errc(), "MessageNumber: buffer too short");
  return std::string(buf, r.ptr);
}

std::string QuoteText(const char* text) {
  constexpr std::size_t kMaxQuoted = 40;
  std::string out;
  for (const char* p = text; *p != '\0'; ++p) {
    if (out.size() == kMaxQuoted) return "'" + out + "...'";
    out += (*p >= 0x20 && *p < 0x7f) ? *p : '?';
  }
  return "'" + out + "'";
}

std::string ReadNumberText(const char* text, double* value) {
  // Fast path: std::from_chars (exact, locale-free; decimal only in its general format) when it
  // reads the whole text to a finite double, which strtod reads to the same double (both round
  // correctly). Anything else (Mathematica exponents, a sign '+', inf, NaN, out of range,
  // trailing bytes) takes strtod below.
  const char* text_end = text + std::strlen(text);
  if (const auto [ptr, ec] = std::from_chars(text, text_end, *value);
      ec == std::errc() && ptr == text_end && std::isfinite(*value))
    return "";
  std::string rewritten;
  const char* cell = text;
  if (const char* mathematica = std::strstr(text, "*^"); mathematica != nullptr) {
    rewritten.assign(text, mathematica);
    rewritten += 'e';
    rewritten += mathematica + 2;
    cell = rewritten.c_str();
  }
  char* end = nullptr;
  *value = std::strtod(cell, &end);
  // strtod also reads C's hexadecimal floats ("0x10", "0x1p3"); no recording writes them, and a
  // cell holding one is more likely damage than a number.
  if (end == cell || *end != '\0' || std::strpbrk(cell, "xX") != nullptr)
    return QuoteText(text) + " is not a number";
  if (!std::isfinite(*value)) return QuoteText(text) + " is not a finite number";
  return "";
}

}  // namespace rlfit
