// `tessera bench pe [--config C] [--m 128 --k 512 --n 128] [--reps 5] [--serial inputs|weights]
//  [--acc-width W] [--fixed-exponent E] [--json]`: host speed of the fast term-serial PE model
// against the bit-parallel MXU model on the same matmul, plus what the simulated tile does with it.
// Operands: inputs ReLU(N(0, 1)) and weights N(0, 0.05), both rounded to bf16 (seed 1). Each side
// computes C = A x W from C = 0 (best of R runs, CPU time of the calling thread):
//   term_macs_per_s  M*K*N / seconds of numerics::term_matmul_accumulate (core.mxu.term.* tile)
//   bf16_macs_per_s  M*K*N / seconds of numerics::mxu_matmul_accumulate (the bf16 MXU's arithmetic)
//   ratio            term / bf16 (target_ratio: 0.125)
// Simulated figures of the same matmul on one tile (rows x cols PEs of `lanes` lanes):
//   tile_cycles      lockstep cycles; bf16_cycles_equal_pe the same PEs as bf16 MAC PEs (one step
//   of `lanes` MACs per cycle); speedup_equal_pe = bf16_cycles_equal_pe / tile_cycles;
//   speedup_equal_area = speedup_equal_pe / area_ratio (bf16 PEs in the same area: 1 / area_ratio
//   as many); terms per MAC, skipped-zero and skipped-out-of-bounds fractions of the 8 term slots.
#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "core/spec.h"
#include "numerics/bf16.h"
#include "numerics/host_cpu.h"
#include "numerics/matmul.h"
#include "numerics/term_matmul.h"
#include "system/machine_spec.h"

namespace tessera::bench {

namespace {

struct BenchPeArgs {
  std::string config, serial;
  int m = 128, k = 512, n = 128, reps = 5, acc_width = 0;
  std::optional<int> fixed_exponent;
  bool json = false;
};

core::CoreSpec pe_spec(const BenchPeArgs& a) {
  core::CoreSpec s = system::load_machine_spec(a.config).core;
  if (a.serial == "weights") s.term.tile.serial = numerics::TermSerialOperand::Weights;
  if (a.serial == "inputs") s.term.tile.serial = numerics::TermSerialOperand::Inputs;
  if (a.acc_width != 0) s.term.tile.pe.acc_fraction_bits = a.acc_width;
  if (a.fixed_exponent) {
    s.term.tile.pe.fixed_exponent_mode = true;
    s.term.tile.pe.fixed_exponent = *a.fixed_exponent;
  }
  try {
    s.term.tile.validate();
  } catch (const Error& e) {  // the config's values were checked when it was read: a flag's fails
    throw UsageError(e.where() == "PeConfig.fixed_exponent" ? "--fixed-exponent" : "--acc-width",
                     e.why());
  }
  return s;
}

void bench_pe(const BenchPeArgs& a) {
  if (a.m < 1 || a.k < 1 || a.n < 1)
    throw UsageError("bench pe", "--m, --k and --n must be positive");
  if (a.reps < 1) throw UsageError("bench pe", "--reps must be positive");
  const core::CoreSpec spec = pe_spec(a);
  const numerics::TermTileConfig& tile = spec.term.tile;
  std::mt19937 rng(1);
  std::normal_distribution<float> in_dist(0.0f, 1.0f), w_dist(0.0f, 0.05f);
  std::vector<float> in(static_cast<size_t>(a.m) * a.k), w(static_cast<size_t>(a.k) * a.n);
  for (float& v : in) v = numerics::round_to_bf16(std::max(0.0f, in_dist(rng)));
  for (float& v : w) v = numerics::round_to_bf16(w_dist(rng));
  std::vector<float> c(static_cast<size_t>(a.m) * a.n);

  numerics::TermMatmulStats st;
  const auto zero_c = [&] { std::fill(c.begin(), c.end(), 0.0f); };
  const double term_s = best_of(a.reps, zero_c, [&] {
                          st = {};
                          numerics::term_matmul_accumulate(tile, in.data(), a.k, w.data(), a.n,
                                                           c.data(), a.n, a.m, a.k, a.n, &st);
                        }).cpu;
  const double bf16_s = best_of(a.reps, zero_c, [&] {
                          numerics::mxu_matmul_accumulate(in.data(), a.k, w.data(), a.n, c.data(),
                                                          a.n, a.m, a.k, a.n);
                        }).cpu;

  const double macs = static_cast<double>(a.m) * a.k * a.n;
  const double slots = 8.0 * static_cast<double>(st.pe_steps) * tile.pe.lanes;
  const int64_t blocks =
      static_cast<int64_t>((a.m + tile.rows - 1) / tile.rows) * ((a.n + tile.cols - 1) / tile.cols);
  const int64_t bf16_cycles = blocks * ((a.k + tile.pe.lanes - 1) / tile.pe.lanes);
  const double speedup_pe =
      st.cycles > 0 ? static_cast<double>(bf16_cycles) / static_cast<double>(st.cycles) : 0.0;
  nlohmann::json j;
  j["m"] = a.m;
  j["k"] = a.k;
  j["n"] = a.n;
  j["tile"] =
      fmt::format("{} x {} PEs x {} lanes, W = {}, {} serial", tile.rows, tile.cols, tile.pe.lanes,
                  tile.pe.acc_fraction_bits,
                  tile.serial == numerics::TermSerialOperand::Inputs ? "inputs" : "weights");
  j["fixed_exponent"] =
      tile.pe.fixed_exponent_mode ? nlohmann::json(tile.pe.fixed_exponent) : nlohmann::json();
  j["term_macs_per_s"] = macs / term_s;
  j["bf16_macs_per_s"] = macs / bf16_s;
  j["ratio"] = bf16_s / term_s;
  j["target_ratio"] = 0.125;
  j["term_host_seconds"] = term_s;
  j["bf16_host_seconds"] = bf16_s;
  j["tile_cycles"] = st.cycles;
  j["bf16_cycles_equal_pe"] = bf16_cycles;
  j["speedup_equal_pe"] = speedup_pe;
  j["speedup_equal_area"] = speedup_pe / spec.term.area_ratio;
  j["area_ratio"] = spec.term.area_ratio;
  j["area_source"] = spec.term.area_source;
  j["terms_per_mac"] = static_cast<double>(st.terms_processed) / macs;
  j["skipped_zero_fraction"] = slots > 0 ? static_cast<double>(st.terms_skipped_zero) / slots : 0.0;
  j["skipped_oob_fraction"] = slots > 0 ? static_cast<double>(st.terms_skipped_oob) / slots : 0.0;
  j["pe_stall_cycles"] = st.pe_stall_cycles;
  j["lane_idle_cycles"] = st.lane_idle_cycles;
  j["reps"] = a.reps;
  j["vector_isa"] =
      numerics::vector_isa_in_use();  // both models' widest host vector paths (--vector-isa)
  print_report(j, {.json = a.json, .key_width = 22});
}

}  // namespace

void setup_pe(CLI::App& cmd) {
  auto args = std::make_shared<BenchPeArgs>();
  add_matmul_shape_flags(cmd, args->m, args->k, args->n);
  add_reps_flag(cmd, args->reps, "best time counts");
  cli::add_config_flag(cmd, args->config);
  cmd.add_option("--serial", args->serial, "term-encoded operand (default: the config's)")
      ->check(CLI::IsMember({"inputs", "weights"}));
  cmd.add_option("--acc-width", args->acc_width, "accumulator width W (default: the config's)");
  cmd.add_option("--fixed-exponent", args->fixed_exponent,
                 "fixed-exponent mode with this exponent (default: the config's)");
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_pe(*args); });
}

}  // namespace tessera::bench
