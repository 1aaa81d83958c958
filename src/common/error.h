// Error types of rlfit: InputError for bad user input (names file, row, column), and
// RLFIT_CHECK for internal invariants. Library code throws; only main() prints and exits.
#pragma once

#include <stdexcept>
#include <string>

namespace rlfit {

// Bad user input: a missing file, a malformed row, a non-finite value. `row` and `column`
// are 1-based as a person counts them in an editor; 0 means "not applicable".
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, int row, int column, const std::string& message)
      : std::runtime_error(Format(file, row, column, message)),
        file_(file), row_(row), column_(column), message_(message) {}

  const std::string& file() const { return file_; }
  int row() const { return row_; }
  int column() const { return column_; }
  // The message without its place (what() is "file: row r, column c: " and this).
  const std::string& message() const { return message_; }

 private:
  static std::string Format(const std::string& file, int row, int column,
                            const std::string& message) {
    std::string where = file;
    if (row > 0) where += ": row " + std::to_string(row);
    if (column > 0) where += ", column " + std::to_string(column);
    return where + ": " + message;
  }
  std::string file_;
  int row_;
  int column_;
  std::string message_;
};

// A broken internal invariant (a bug, not bad input).
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace rlfit

#define RLFIT_CHECK(cond, msg)                                                   \
  do {                                                                           \
    if (!(cond))                                                                 \
      throw ::rlfit::InternalError(std::string(__FILE__) + ":" +                 \
                                   std::to_string(__LINE__) + ": " + (msg));     \
  } while (0)
