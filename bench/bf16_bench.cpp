// bf16 rounding throughput: the vectorised array form and the scalar constexpr form.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "numerics/bf16.h"

namespace {

std::vector<float> inputs(size_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 100.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void BM_RoundToBf16Array(benchmark::State& state) {
  const auto src = inputs(static_cast<size_t>(state.range(0)));
  std::vector<float> x(src.size());
  for (auto _ : state) {
    x = src;
    tessera::numerics::round_to_bf16(x.data(), static_cast<long>(x.size()));
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RoundToBf16Array)->Arg(1024)->Arg(1 << 20);

void BM_RoundToBf16Scalar(benchmark::State& state) {
  const auto src = inputs(static_cast<size_t>(state.range(0)));
  std::vector<float> x(src.size());
  for (auto _ : state) {
    for (size_t i = 0; i < src.size(); ++i) x[i] = tessera::numerics::round_to_bf16(src[i]);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RoundToBf16Scalar)->Arg(1024)->Arg(1 << 20);

}  // namespace
