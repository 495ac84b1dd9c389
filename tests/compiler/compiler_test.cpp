#include "compiler/compiler.h"

#include <cstring>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "compiler/emitter.h"
#include "core/functional.h"
#include "core/spec.h"
#include "graph/model.h"

namespace tessera::compiler {
namespace {

core::CoreSpec config(const std::string& name) {
  return core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/" + name + ".json");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Compiler, MlpTrainingStepIsOneProgramWithinTheCoreLimits) {
  const core::CoreSpec spec = config("tpu-v2-like");
  CompileOptions o;
  o.batch = 16;
  const CompiledProgram p = compile(graph::zoo_spec("mlp"), spec, o);
  EXPECT_EQ(p.stats.bundles, static_cast<int64_t>(p.program.code.size()));
  EXPECT_LE(p.stats.bundles, spec.imem_bundles);
  EXPECT_EQ(p.stats.gemms, 3 + 3 + 2);  // forward, weight gradients, input gradients (not layer 1)
  EXPECT_EQ(p.stats.mxu_macs, 3 * 16 * (784 * 256 + 256 * 128 + 128 * 10) - 16 * 784 * 256);
  EXPECT_GT(p.stats.vmem_peak_rows, 0);
  EXPECT_LE(p.stats.vmem_peak_rows, spec.vmem_rows());
  ASSERT_EQ(p.params.size(), 6u);
  ASSERT_EQ(p.state.size(), 12u);  // Adam (the default): m and v per parameter
  EXPECT_EQ(p.params[0].words, 784 * 256);
  EXPECT_EQ(p.x.words, 16 * 784);
}

TEST(Compiler, ParameterAddressesDoNotDependOnBatchOrMode) {
  const core::CoreSpec spec = config("tpu-v2-like");
  CompileOptions a, b;
  a.batch = 16;
  b.batch = 8;
  b.training = false;
  const CompiledProgram pa = compile(graph::zoo_spec("mlp"), spec, a);
  const CompiledProgram pb = compile(graph::zoo_spec("mlp"), spec, b);
  ASSERT_EQ(pa.params.size(), pb.params.size());
  for (size_t i = 0; i < pa.params.size(); ++i) EXPECT_EQ(pa.params[i].hbm, pb.params[i].hbm);
}

TEST(Compiler, TransientValuesReuseHbm) {
  const core::CoreSpec spec = config("tpu-v2-like");
  CompileOptions o;
  o.batch = 64;
  const CompiledProgram p = compile(graph::zoo_spec("mlp"), spec, o);
  EXPECT_GT(p.stats.transient_words, 0);
  EXPECT_LT(p.stats.transient_words, p.stats.transient_unshared_words);
}

TEST(Compiler, DumpAfterPlanListsAddresses) {
  const core::CoreSpec spec = config("tpu-v2-like");
  std::ostringstream os;
  CompileOptions o;
  o.batch = 8;
  o.dump_after = "plan-hbm";
  o.dump = &os;
  compile(graph::zoo_spec("mlp"), spec, o);
  EXPECT_NE(os.str().find("// ---- after plan-hbm"), std::string::npos);
  EXPECT_NE(os.str().find(" dense1.w [784, 256]"), std::string::npos);
}

TEST(Compiler, UnknownPass_bad) {
  CompileOptions o;
  o.dump_after = "nope";
  EXPECT_EQ(error_of([&] { compile(graph::zoo_spec("mlp"), config("tpu-v2-like"), o); }),
            "compile: unknown pass 'nope' for --dump-after (passes: autodiff, plan-hbm, lower)");
}

TEST(Compiler, ModelTooBigForHbm_bad) {
  CompileOptions o;
  o.batch = 8;
  const std::string e = error_of([&] { compile(graph::zoo_spec("mlp"), config("small"), o); });
  EXPECT_EQ(
      e,
      "compiler: parameters and optimizer state need 3788560 bytes of HBM, the core has 1048576");
}

TEST(Emitter, ScheduledCodeMatchesSequentialExecution) {
  const core::CoreSpec spec = config("small");
  Emitter em(spec);
  auto op = [](isa::Opcode o, int d, int a, int b) {
    isa::Instr in;
    in.op = o;
    in.d = static_cast<uint8_t>(d);
    in.a = static_cast<uint8_t>(a);
    in.b = static_cast<uint8_t>(b);
    return in;
  };
  isa::Instr one;
  one.op = isa::Opcode::VBCASTI;
  one.d = 1;
  one.imm = 0x3f800000;
  em.emit(one);
  // a chain and independent work interleaved: v2 = 1+1, v3 = v2+v2, v1 = v3*v3 (WAR on v1), ...
  em.emit(op(isa::Opcode::VADDF, 2, 1, 1));
  em.emit(op(isa::Opcode::VADDF, 3, 2, 2));
  em.emit(op(isa::Opcode::VMULF, 1, 3, 3));
  em.emit(op(isa::Opcode::VADDF, 4, 1, 2));
  em.emit(op(isa::Opcode::VADDF, 2, 4, 4));
  isa::Program p;
  p.code = em.finish();
  core::FunctionalCore f(spec, p);
  f.run();
  const float v2 = 2 * (16.0f + 2.0f);
  uint32_t w = f.state().vreg(2)[0];
  float got;
  std::memcpy(&got, &w, 4);
  EXPECT_EQ(got, v2);
}

}  // namespace
}  // namespace tessera::compiler
