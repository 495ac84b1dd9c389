// tessera::Error — the one exception type library code throws.
//
// Contract: library code never exits or aborts on bad input; it throws Error with *where* (a file
// and line/column, a config key, a PC and cycle, ...) and *why*. Only cli/main.cpp turns an Error
// into a message and a non-zero exit code. TESSERA_CHECK guards invariants and stays on in
// release builds.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace tessera {

class Error : public std::runtime_error {
 public:
  Error(std::string where, std::string why)
      : std::runtime_error(where.empty() ? why : where + ": " + why),
        m_where(std::move(where)),
        m_why(std::move(why)) {}

  const std::string& where() const { return m_where; }
  const std::string& why() const { return m_why; }

 private:
  std::string m_where;
  std::string m_why;
};

// A command-line flag whose value a command refuses (a range, a combination of flags): the same
// kind of mistake as a flag the parser rejects, so cli/main.cpp gives it the same exit code.
class UsageError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void check_failed(const char* cond, const char* file, int line,
                               const std::string& msg);

}  // namespace tessera

// Invariant check, on in every build type. `msg` may be any expression convertible to string.
#define TESSERA_CHECK(cond, msg)                                            \
  do {                                                                      \
    if (!(cond)) ::tessera::check_failed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
