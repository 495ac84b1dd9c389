// The whole `gpt` training step compiled to one tensor-core program (tiny: d 32, 2 heads, 1 block,
// context 16, batch 2) and run for 3 steps on the timed core: the loss of every step, every
// parameter and the optimizer state bit-identical to the host executor in chip numerics with the
// same optimizer (SGD with momentum; Adam on the vector unit).
#include <cstring>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "compiler/compiler.h"
#include "core/core.h"
#include "core/spec.h"
#include "graph/autodiff.h"
#include "graph/executor.h"
#include "graph/gpt_model.h"
#include "graph/optimizer.h"
#include "numerics/optimizer.h"
#include "support/bit_equal.h"
#include "support/kernel_config.h"

namespace tessera::compiler {
namespace {

using testing::expect_bit_equal;
using testing::kernel_config;

template <typename T>
std::vector<uint32_t> words(const std::vector<T>& v) {
  std::vector<uint32_t> w(v.size());
  std::memcpy(w.data(), v.data(), v.size() * 4);
  return w;
}

std::vector<float> read(const core::Core& core, const HbmTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.words));
  core.state().hbm.read_block(t.hbm, reinterpret_cast<uint32_t*>(v.data()), t.words);
  return v;
}

// Three steps of `opt` (Adam on the vector unit: the unit's state lives outside HBM).
void check_steps(const graph::OptimizerConfig& opt) {
  const graph::GptSpec gs{32, 2, 1, 16};
  const int batch = 2;
  const graph::Model model = graph::build_gpt(gs, batch);
  CompileOptions o;
  o.optimizer = opt;
  o.adam_on = AdamOn::kVectorUnit;
  const core::CoreSpec spec = kernel_config("tpu-v2-like");
  const CompiledProgram cp = compile(model, spec, o);

  std::vector<std::vector<float>> params = graph::init_gpt_params(model, 3);
  std::vector<int64_t> sizes;
  for (const auto& p : params) sizes.push_back(static_cast<int64_t>(p.size()));
  graph::Optimizer host_opt(opt, sizes);
  const graph::TrainingGraph tg = graph::build_training_graph(model.graph, model.loss);
  graph::Executor<float> host(tg.graph, graph::Numerics::kChip);

  const std::vector<std::vector<float>> initial = params;
  std::vector<std::vector<float>> chip_params = params, chip_state;
  for (const HbmTensor& s : cp.state) chip_state.emplace_back(static_cast<size_t>(s.words), 0.0f);
  SplitMix64 rng(5);
  for (int step = 0; step < 3; ++step) {
    std::vector<int32_t> ids(static_cast<size_t>(batch) * gs.context), labels(ids.size());
    for (int32_t& b : ids) b = static_cast<int32_t>(rng.next() % 256);
    for (int32_t& b : labels) b = static_cast<int32_t>(rng.next() % 256);

    core::Core core(spec, cp.program);  // a fresh core per step: HBM state carried by the host
    auto write = [&](const HbmTensor& t, const std::vector<uint32_t>& w) {
      ASSERT_EQ(static_cast<int64_t>(w.size()), t.words) << t.name;
      core.host_state().hbm.write_block(t.hbm, w.data(), t.words);
    };
    for (size_t i = 0; i < cp.params.size(); ++i) write(cp.params[i], words(chip_params[i]));
    for (size_t i = 0; i < cp.state.size(); ++i) write(cp.state[i], words(chip_state[i]));
    write(cp.x, words(ids));
    write(cp.labels, words(labels));
    if (opt.kind == graph::OptimizerKind::kAdam) {
      const auto sc = numerics::adam_step_scalars(opt.lr, opt.beta1, opt.beta2, step + 1);
      write(cp.scalars, words(std::vector<float>{sc.step, sc.sqrt_bc2}));
    }
    core.run();
    const float chip_loss = read(core, cp.loss)[0];
    for (size_t i = 0; i < cp.params.size(); ++i) chip_params[i] = read(core, cp.params[i]);
    for (size_t i = 0; i < cp.state.size(); ++i) chip_state[i] = read(core, cp.state[i]);

    for (size_t i = 0; i < params.size(); ++i) host.set(tg.params[i], params[i]);
    host.set_labels(tg.graph.find_value("x"), ids);
    host.set_labels(tg.graph.find_value("labels"), labels);
    host.run();
    const float host_loss = host.get(tg.loss)[0];
    std::vector<float*> ps;
    std::vector<const float*> gs_;
    for (size_t i = 0; i < params.size(); ++i) {
      ps.push_back(params[i].data());
      gs_.push_back(host.get(tg.grads[i]).data());
    }
    host_opt.step(ps, gs_);

    ASSERT_EQ(std::memcmp(&chip_loss, &host_loss, 4), 0)
        << "loss of step " << step << ": chip " << chip_loss << " host " << host_loss;
    for (size_t i = 0; i < params.size(); ++i)
      expect_bit_equal(chip_params[i], params[i],
                       "step " + std::to_string(step) + " " + cp.params[i].name);
    for (size_t i = 0; i < chip_state.size(); ++i)
      expect_bit_equal(chip_state[i], host_opt.state()[i],
                       "step " + std::to_string(step) + " " + cp.state[i].name);
  }
  for (size_t i = 0; i < params.size(); ++i)  // every parameter trained
    EXPECT_NE(std::memcmp(params[i].data(), initial[i].data(), params[i].size() * 4), 0)
        << cp.params[i].name;
}

TEST(GptStep, ThreeSgdStepsOnTheChipAreBitIdenticalToTheHostChipNumerics) {
  graph::OptimizerConfig opt;
  opt.kind = graph::OptimizerKind::kSgd;
  opt.lr = 0.1;
  check_steps(opt);
}

TEST(GptStep, ThreeAdamStepsOnTheChipAreBitIdenticalToTheHostChipNumerics) {
  graph::OptimizerConfig opt;
  opt.kind = graph::OptimizerKind::kAdam;
  opt.lr = 1e-3;
  check_steps(opt);
}

}  // namespace
}  // namespace tessera::compiler

namespace tessera::compiler {
namespace {

TEST(GptStep, DefaultRecipeCompilesIntoTheConfiguredInstructionMemory) {
  // d 128, 4 heads, 2 blocks, context 64, batch 32, Adam on the unit: compile() throws when the
  // program exceeds instruction memory (the batched GEMMs, the row kernels' groups and the
  // permutes' DMA runs are rolled into loops).
  const core::CoreSpec spec =
      core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  const CompiledProgram cp = compile(graph::build_gpt(graph::GptSpec{}, 32), spec, {});
  EXPECT_LE(cp.stats.bundles, spec.imem_bundles);
  EXPECT_LE(cp.stats.hbm_words * 4, spec.hbm_bytes);
  EXPECT_LE(cp.stats.vmem_peak_rows, spec.vmem_rows());
}

}  // namespace
}  // namespace tessera::compiler
