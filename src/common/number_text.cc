// The shared number formatter (number_text.h).
#include "src/common/number_text.h"

#include <charconv>
#include <cmath>

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

}  // namespace rlfit
