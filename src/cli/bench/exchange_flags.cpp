#include "cli/bench/exchange_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/bench/integer_flags.h"
#include "common/error.h"

namespace tessera::bench {

void add_exchange_flags(CLI::App& cmd, ExchangeFlags& f) {
  cmd.add_option("--chips", f.chips, "chips")->capture_default_str();
  cmd.add_option("--topology", f.topology,
                 "line, ring or torus2d (dims: the factorisation closest to a square)")
      ->check(CLI::IsMember({"line", "ring", "torus2d"}))
      ->capture_default_str();
  cli::check_non_negative_integer(
      cmd.add_option("--bytes", f.bytes, "bytes all-reduced (fp32 words: a multiple of 4)")
          ->capture_default_str());
  cmd.add_option("--directions", f.directions, "1: one way round the ring; 2: half each way")
      ->check(CLI::IsMember({1, 2}))
      ->capture_default_str();
}

void check_exchange_bytes(uint64_t bytes) {
  if (bytes < 4 || bytes % 4 != 0)
    throw UsageError("--bytes", fmt::format("{}: a positive multiple of 4", bytes));
  if (bytes / 4 > 0x3fffffffull)
    throw UsageError("--bytes", fmt::format("{}: at most 4 GiB", bytes));
}

void set_topology(system::SystemSpec& s, const std::string& name) {
  if (name == "line") {
    s.topology = system::Topology::kLine;
  } else if (name == "ring") {
    s.topology = system::Topology::kRing;
  } else if (name == "torus2d") {
    s.topology = system::Topology::kTorus2d;
    int y = 1;
    for (int d = 1; d * d <= s.chips; ++d)
      if (s.chips % d == 0) y = d;
    s.dims_y = y;
    s.dims_x = s.chips / y;
  } else {
    throw UsageError("--topology", fmt::format("'{}': expected line, ring or torus2d", name));
  }
}

}  // namespace tessera::bench
