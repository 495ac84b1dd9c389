#include "cli/bench/integer_flags.h"

#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace tessera::cli {

namespace {

// The integer check behind check_non_negative_integer and check_positive_integer.
CLI::Option* check_integer(CLI::Option* option, bool positive) {
  const char* kind = positive ? "positive" : "non-negative";
  return option->check(CLI::Validator(
      [positive, kind](std::string& text) -> std::string {
        const bool digits =
            !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && (!positive || text.find_first_not_of('0') != std::string::npos)) return "";
        return fmt::format("must be a {} integer, got '{}'", kind, text);
      },
      positive ? "POSITIVE" : "NON-NEGATIVE"));
}

}  // namespace

CLI::Option* check_non_negative_integer(CLI::Option* option) {
  return check_integer(option, false);
}

CLI::Option* check_positive_integer(CLI::Option* option) {
  return check_integer(option, true);
}

}  // namespace tessera::cli
