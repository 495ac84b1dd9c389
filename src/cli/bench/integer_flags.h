// Checks of an integer flag's text before CLI11 converts it, so a negative value is refused by
// name instead of wrapping round an unsigned field: "--seed: must be a non-negative integer, got
// '-1'", "--max-bundles: must be a positive integer, got '0'". Shared by the commands and the
// bench subcommands.
#pragma once

namespace CLI {
class Option;
}  // namespace CLI

namespace tessera::cli {

CLI::Option* check_non_negative_integer(CLI::Option* option);
CLI::Option* check_positive_integer(CLI::Option* option);

}  // namespace tessera::cli
