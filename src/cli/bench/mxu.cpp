// `tessera bench mxu [--m 1024 --k 1024 --n 1024] [--config C] [--double-buffer on|off] [--reps R]
//  [--json]`: runs the generated GEMM program (kernels/gemm.h) on the timed core with bit-exact MXU
// numerics, checks C against numerics::mxu_matmul_accumulate on the host, and times the simulation
// against OpenBLAS single-threaded cblas_sgemm on the same fp32 operands in the same process (best
// of R repetitions each, cli/bench/harness.h). Figures:
//   sim_gmacs       M*K*N / (host CPU seconds of the best simulated run) / 1e9
//   blas_gmacs      M*K*N / (host CPU seconds of the best sgemm) / 1e9;  ratio = sim / blas
//   (CPU time of the calling thread: both codes run single-threaded on it, and CPU time stays
//   meaningful on a loaded host; the wall seconds of the same runs are reported too). The
//   simulated run is Core::run on a Core already built from the image (host_setup_seconds:
//   decoding and loading A and B into the simulated HBM, like sgemm's operands already in memory)
//   sim_cycles      the MXU span: first weight row shifted in to the last result out
//   formula_cycles  the published weight-stationary formula for the kernel's tiling (equals
//                   sim_cycles with --double-buffer off when nothing but the MXU limits the kernel)
//   program_cycles  the whole program (DMA prologue and epilogue included)
//   mxu_utilization cycles the MXU input ports streamed rows / (core.mxu.count * sim_cycles)
//                   (= MACs / (count * R * C * sim_cycles) with bf16 PEs)
//   (sim_cycles and mxu_utilization cover all MXUs: from the first weight row into any MXU to the
//   last result out of any)
#include <cblas.h>

#include <algorithm>
#include <bit>
#include <memory>
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
#include "core/core.h"
#include "kernels/gemm.h"
#include "numerics/bf16.h"
#include "numerics/matmul.h"
#include "system/machine_spec.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace tessera::bench {

namespace {

struct MxuArgs {
  std::string config;
  int m = 1024, k = 1024, n = 1024;
  std::string double_buffer;  // "", "on", "off"
  int reps = 3;               // at least kMxuMinReps (its runs are short and the host is noisy)
  bool json = false;
};

// A 1024^3 run takes ~0.05 s on either side; best of 3 still varied the ratio by +-0.1 on a shared
// host, best of 10 by +-0.04. Fewer repetitions than this are raised to it.
constexpr int kMxuMinReps = 10;

core::CoreSpec mxu_spec(const MxuArgs& a) {
  core::CoreSpec s = system::load_machine_spec(a.config).core;
  if (a.double_buffer == "on") s.mxu_double_buffer = true;
  if (a.double_buffer == "off") s.mxu_double_buffer = false;
  return s;
}

// Throws Error at the first element of the simulated C that differs from the host reference.
void check_against_reference(const MxuArgs& a, const std::vector<float>& A,
                             const std::vector<float>& B, const std::vector<float>& sim_c) {
  std::vector<float> ar(A), br(B), expected(sim_c.size(), 0.0f);
  numerics::round_to_bf16(ar.data(), static_cast<long>(ar.size()));
  numerics::round_to_bf16(br.data(), static_cast<long>(br.size()));
  numerics::mxu_matmul_accumulate(ar.data(), a.k, br.data(), a.n, expected.data(), a.n, a.m, a.k,
                                  a.n);
  const size_t N = static_cast<size_t>(a.n);
  for (size_t i = 0; i < expected.size(); ++i)
    if (std::bit_cast<uint32_t>(expected[i]) != std::bit_cast<uint32_t>(sim_c[i]))
      throw Error(
          "bench mxu",
          fmt::format("the simulated C differs from the host reference at ({}, {}): {} vs {}",
                      i / N, i % N, sim_c[i], expected[i]));
}

void bench_mxu(MxuArgs a) {
  if (a.m < 1 || a.k < 1 || a.n < 1)
    throw UsageError("bench mxu", "--m, --k and --n must be positive");
  if (a.reps < 1) throw UsageError("bench mxu", "--reps must be positive");
  a.reps = std::max(a.reps, kMxuMinReps);
  const core::CoreSpec spec = mxu_spec(a);
  const size_t M = static_cast<size_t>(a.m), K = static_cast<size_t>(a.k),
               N = static_cast<size_t>(a.n);
  // The program first: it refuses a shape the simulated memories cannot hold before the host
  // allocates the operands.
  kernels::GemmProgram g = kernels::make_gemm(spec, a.m, a.k, a.n);
  std::mt19937 rng(2024);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> A(M * K), B(K * N);
  for (float& x : A) x = dist(rng);
  for (float& x : B) x = dist(rng);
  kernels::add_gemm_operands(g.program, g.plan, A.data(), B.data());

  // Timed: Core::run, i.e. executing the program; untimed: building the Core (loading the image
  // into the simulated memories, like sgemm's operands being in host memory already).
  std::unique_ptr<core::Core> core;
  double setup_s = 0;
  const Timing sim_t = best_of(
      a.reps,
      [&] {
        setup_s = time_once([&] { core = std::make_unique<core::Core>(spec, g.program); }).cpu;
      },
      [&] { core->run(); });
  check_against_reference(a, A, B, kernels::read_gemm_result(core->state(), g.plan));
  const core::MxuStats st = core->machine().mxu_stats();
  const int64_t span = st.span(), busy = st.busy_cycles;
  const double mxus = spec.mxu_count;

  openblas_set_num_threads(1);
  std::vector<float> blas_c(M * N);
  const Timing blas_t = best_of(
      a.reps, [] {},
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, a.m, a.n, a.k, 1.0f, A.data(), a.k,
                    B.data(), a.n, 0.0f, blas_c.data(), a.n);
      });

  const double macs = static_cast<double>(g.plan.macs());
  nlohmann::json j;
  j["sim_gmacs"] = macs / sim_t.cpu / 1e9;
  j["blas_gmacs"] = macs / blas_t.cpu / 1e9;
  j["ratio"] = blas_t.cpu / sim_t.cpu;
  j["sim_cycles"] = span;
  j["program_cycles"] = core->cycles();
  j["mxu_utilization"] =
      span > 0 ? static_cast<double>(busy) / (mxus * static_cast<double>(span)) : 0.0;
  j["formula_cycles"] = g.plan.formula_cycles;
  j["bundles"] = core->bundles();
  j["host_seconds"] = sim_t.cpu;
  j["host_wall_seconds"] = sim_t.wall;
  j["host_setup_seconds"] = setup_s;
  j["blas_seconds"] = blas_t.cpu;
  j["blas_wall_seconds"] = blas_t.wall;
  j["m"] = a.m, j["k"] = a.k, j["n"] = a.n;
  j["double_buffer"] = spec.mxu_double_buffer;
  j["config"] = spec.name;
  j["verified"] = "bit-exact vs numerics::mxu_matmul_accumulate";
  print_report(j, {.json = a.json, .key_width = 18});
}

}  // namespace

void setup_mxu(CLI::App& cmd) {
  auto args = std::make_shared<MxuArgs>();
  add_matmul_shape_flags(cmd, args->m, args->k, args->n);
  cli::add_config_flag(cmd, args->config);
  cmd.add_option("--double-buffer", args->double_buffer,
                 "override the config's MXU weight double buffering")
      ->check(CLI::IsMember({"on", "off"}));
  add_reps_flag(cmd, args->reps, "best time counts");
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_mxu(*args); });
}

}  // namespace tessera::bench
