// Simulator speed: bundles per host second on the vector-heavy stream (kernels/vector_stream.h),
// on the timed core and on the functional interpreter (configs/tpu-v2-like.json).
#include <benchmark/benchmark.h>

#include "core/core.h"
#include "core/functional.h"
#include "core/spec.h"
#include "kernels/vector_stream.h"

namespace {

void BM_TimedCoreVectorStream(benchmark::State& state) {
  const tessera::core::CoreSpec spec =
      tessera::core::load_core_spec(TESSERA_SOURCE_DIR "/configs/tpu-v2-like.json");
  const auto vs = tessera::kernels::make_vector_stream(spec, state.range(0));
  for (auto _ : state) {
    tessera::core::Core core(spec, vs.program);
    core.run();
    benchmark::DoNotOptimize(core.cycles());
  }
  state.counters["bundles"] = benchmark::Counter(
      static_cast<double>(vs.bundles_executed * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TimedCoreVectorStream)->Arg(20000)->Unit(benchmark::kMillisecond);

void BM_FunctionalCoreVectorStream(benchmark::State& state) {
  const tessera::core::CoreSpec spec =
      tessera::core::load_core_spec(TESSERA_SOURCE_DIR "/configs/tpu-v2-like.json");
  const auto vs = tessera::kernels::make_vector_stream(spec, state.range(0));
  for (auto _ : state) {
    tessera::core::FunctionalCore core(spec, vs.program);
    core.run();
    benchmark::DoNotOptimize(core.bundles());
  }
  state.counters["bundles"] = benchmark::Counter(
      static_cast<double>(vs.bundles_executed * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FunctionalCoreVectorStream)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace
