// The compiler's inference-only contract (compiler/compiler.h): a model without labels and loss
// compiles to a program from x to the output, which equals the host executor in chip numerics;
// training such a model is an Error.
#include <cstring>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "compiler/compiler.h"
#include "core/core.h"
#include "graph/executor.h"
#include "support/bit_equal.h"
#include "support/error_of.h"
#include "support/kernel_config.h"

namespace tessera::compiler {
namespace {

// x [5, 24] -> matmul w [24, 7] -> add b [7] -> tanh -> slice of columns 1, 3, 5: [5, 3].
graph::Model forward_only() {
  graph::Model m;
  m.name = "forward";
  m.batch = 5;
  graph::Graph& g = m.graph;
  m.input = g.add_input("x", {5, 24});
  const int w = g.add_param("w", {24, 7}), b = g.add_param("b", {7});
  const int h =
      g.add_node(graph::OpKind::kAdd,
                 {g.add_node(graph::OpKind::kMatMul, {m.input, w}, {}, "xw"), b}, {}, "h");
  const int t = g.add_node(graph::OpKind::kTanh, {h}, {}, "t");
  m.logits =
      g.add_node(graph::OpKind::kSlice, {t}, graph::Attrs::slice({5, 3}, {0, 1}, {1, 2}), "y");
  m.params = g.params();
  m.fan_in.assign(m.params.size(), 1);
  return m;
}

std::vector<float> values(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.unit() - 0.5);
  return v;
}

void put(isa::Program& p, int64_t at, const std::vector<float>& v) {
  std::vector<uint32_t> w(v.size());
  std::memcpy(w.data(), v.data(), 4 * v.size());
  p.data.push_back(isa::DataSegment{isa::Space::Hbm, static_cast<uint64_t>(at), w});
}

TEST(InferenceOnly, ModelWithoutLossRunsFromXToTheOutput) {
  const core::CoreSpec spec = testing::kernel_config("tpu-v2-like");
  const graph::Model m = forward_only();
  CompileOptions o;
  o.training = false;
  CompiledProgram p = compile(m, spec, o);
  EXPECT_EQ(p.loss.words, 0);
  EXPECT_EQ(p.labels.words, 0);
  EXPECT_EQ(p.logits.words, 15);
  const std::vector<float> x = values(5 * 24, 1), w = values(24 * 7, 2), b = values(7, 3);
  put(p.program, p.x.hbm, x);
  put(p.program, p.params[0].hbm, w);
  put(p.program, p.params[1].hbm, b);
  core::Core core(spec, p.program);
  core.run();
  std::vector<float> got(15);
  core.state().hbm.read_block(p.logits.hbm, reinterpret_cast<uint32_t*>(got.data()), 15);
  graph::Executor<float> host(m.graph, graph::Numerics::kChip);
  host.set(m.input, x);
  host.set(m.params[0], w);
  host.set(m.params[1], b);
  host.run();
  testing::expect_bit_equal(got, host.get(m.logits), "inference-only output");
}

TEST(InferenceOnly, TrainingAModelWithoutLoss_bad) {
  CompileOptions o;
  EXPECT_EQ(
      testing::error_of([&] { compile(forward_only(), testing::kernel_config("tpu-v2-like"), o); }),
      "compile: model 'forward' has no loss: training needs labels and a loss");
}

}  // namespace
}  // namespace tessera::compiler
