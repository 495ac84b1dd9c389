// Checks of an integer flag's text before CLI11 converts it, so a negative value is refused by
// name instead of wrapping round an unsigned field: "--seed: must be a non-negative integer, got
// '-1'", "--max-bundles: must be a positive integer, got '0'". Shared by the commands and the
// bench subcommands.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class Option;
}  // namespace CLI

namespace tessera::cli {

CLI::Option* check_non_negative_integer(CLI::Option* option);
CLI::Option* check_positive_integer(CLI::Option* option);

// The comma-separated positive integers of a flag's value ("1,16,256"); an item that is not one
// (empty, negative, not a number, above INT_MAX) is a UsageError naming `flag`: "'x' is not a
// positive <what>". An empty value gives no items.
std::vector<int> positive_integer_list(const std::string& list, const std::string& flag,
                                       const std::string& what);

}  // namespace tessera::cli
