#include "cli/bench/integer_flags.h"

#include <sstream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/error.h"

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

std::vector<int> positive_integer_list(const std::string& list, const std::string& flag,
                                       const std::string& what) {
  std::vector<int> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size() || v < 1) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {  // std::stoi's invalid_argument and out_of_range
      throw UsageError(flag, fmt::format("'{}' is not a positive {}", item, what));
    }
  }
  return out;
}

}  // namespace tessera::cli
