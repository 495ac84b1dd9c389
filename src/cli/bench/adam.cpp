// `tessera bench adam [--params N ...] [--config C] [--json]`: one Adam step (adam_step.h) on the
// unit (tensor core: adam.start + wait) and on the vector unit (adam_vector_step_asm) for each N,
// checks both against numerics/adam.h bit for bit, and prints bytes and cycles per step and
// bytes_ratio / cycles_ratio (unit / vector unit).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/adam_step.h"
#include "cli/bench/benches.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "system/machine_spec.h"

namespace tessera::bench {

namespace {

struct AdamBenchArgs {
  std::vector<int64_t> params = {100000, 1000000, 10000000};
  std::string config;
  bool json = false;
};

nlohmann::ordered_json cost_json(const AdamStepCost& c) {
  return nlohmann::ordered_json{{"cycles_per_step", c.cycles},
                                {"bytes_per_step", c.bytes},
                                {"energy_uj_per_step", c.energy_uj}};
}

void print_row(const AdamBenchRow& r) {
  std::printf(
      "n=%-9lld unit: %10lld cycles %12lld B %9.2f uJ | vector unit: %10lld cycles %12lld B "
      "%9.2f uJ | bytes_ratio %.4f cycles_ratio %.4f\n",
      static_cast<long long>(r.n), static_cast<long long>(r.unit.cycles),
      static_cast<long long>(r.unit.bytes), r.unit.energy_uj,
      static_cast<long long>(r.vector_unit.cycles), static_cast<long long>(r.vector_unit.bytes),
      r.vector_unit.energy_uj, r.bytes_ratio(), r.cycles_ratio());
}

void bench_adam(const AdamBenchArgs& a) {
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const int64_t n : a.params) {
    const AdamBenchRow r = adam_bench_step(spec, n);
    if (!r.unit_bit_identical || !r.vector_bit_identical)
      throw Error("bench adam",
                  fmt::format("n = {}: {} differs from numerics::adam_update", n,
                              r.unit_bit_identical ? "the vector unit" : "the Adam unit"));
    rows.push_back({{"params", n},
                    {"unit", cost_json(r.unit)},
                    {"vector_unit", cost_json(r.vector_unit)},
                    {"bytes_ratio", r.bytes_ratio()},
                    {"cycles_ratio", r.cycles_ratio()},
                    {"bit_identical", true}});
    if (!a.json) print_row(r);
  }
  if (a.json) {
    nlohmann::ordered_json j = {{"benchmark", "adam"},
                                {"config", a.config.empty() ? "defaults" : a.config},
                                {"step", 1},
                                {"rows", rows}};
    std::printf("%s\n", j.dump(2).c_str());
  }
}

}  // namespace

void setup_adam(CLI::App& cmd) {
  auto args = std::make_shared<AdamBenchArgs>();
  cmd.add_option("--params", args->params, "parameter counts")->capture_default_str();
  cli::add_config_flag(cmd, args->config);
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_adam(*args); });
}

}  // namespace tessera::bench
