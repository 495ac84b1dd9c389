// The MXU's bit-exact arithmetic against OpenBLAS sgemm (one thread), per MXU block and per whole
// GEMM program on the timed core. Counter "macs" is multiply-accumulates per second.
#include <cblas.h>

#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/core.h"
#include "core/spec.h"
#include "kernels/gemm.h"
#include "numerics/bf16.h"
#include "numerics/matmul.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace {

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = tessera::numerics::round_to_bf16(dist(rng));
  return v;
}

void set_macs(benchmark::State& state, double macs_per_iteration) {
  state.counters["macs"] = benchmark::Counter(
      macs_per_iteration * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// One mmul block: rows (sublanes) x R inputs times an R x C tile.
void BM_MxuBlock(benchmark::State& state) {
  const int S = static_cast<int>(state.range(0)), R = static_cast<int>(state.range(1)), C = R;
  const auto a = random_vector(static_cast<size_t>(S) * R, 1),
             w = random_vector(static_cast<size_t>(R) * C, 2);
  std::vector<float> acc(static_cast<size_t>(S) * C, 0.0f);
  for (auto _ : state) {
    tessera::numerics::mxu_matmul_accumulate(a.data(), R, w.data(), C, acc.data(), C, S, R, C);
    benchmark::DoNotOptimize(acc.data());
  }
  set_macs(state, static_cast<double>(S) * R * C);
}
BENCHMARK(BM_MxuBlock)->Args({8, 128})->Args({2, 8})->Args({64, 128});

void BM_SgemmBlock(benchmark::State& state) {
  openblas_set_num_threads(1);
  const int S = static_cast<int>(state.range(0)), R = static_cast<int>(state.range(1)), C = R;
  const auto a = random_vector(static_cast<size_t>(S) * R, 1),
             w = random_vector(static_cast<size_t>(R) * C, 2);
  std::vector<float> acc(static_cast<size_t>(S) * C, 0.0f);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, C, R, 1.0f, a.data(), R, w.data(), C,
                1.0f, acc.data(), C);
    benchmark::DoNotOptimize(acc.data());
  }
  set_macs(state, static_cast<double>(S) * R * C);
}
BENCHMARK(BM_SgemmBlock)->Args({8, 128})->Args({2, 8})->Args({64, 128});

// The whole generated GEMM program (n x n x n) on the timed core on configs/tpu-v2-like.json.
void BM_GemmProgramOnTimedCore(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const tessera::core::CoreSpec spec =
      tessera::core::load_core_spec(TESSERA_SOURCE_DIR "/configs/tpu-v2-like.json");
  tessera::kernels::GemmProgram g = tessera::kernels::make_gemm(spec, n, n, n);
  const auto a = random_vector(static_cast<size_t>(n) * n, 3),
             b = random_vector(static_cast<size_t>(n) * n, 4);
  tessera::kernels::add_gemm_operands(g.program, g.plan, a.data(), b.data());
  for (auto _ : state) {
    tessera::core::Core core(spec, g.program);
    core.run();
    benchmark::DoNotOptimize(core.cycles());
  }
  set_macs(state, static_cast<double>(n) * n * n);
}
BENCHMARK(BM_GemmProgramOnTimedCore)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond);

void BM_Sgemm(benchmark::State& state) {
  openblas_set_num_threads(1);
  const int n = static_cast<int>(state.range(0));
  const auto a = random_vector(static_cast<size_t>(n) * n, 3),
             b = random_vector(static_cast<size_t>(n) * n, 4);
  std::vector<float> c(static_cast<size_t>(n) * n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  set_macs(state, static_cast<double>(n) * n * n);
}
BENCHMARK(BM_Sgemm)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond);

}  // namespace
