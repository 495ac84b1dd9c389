// Hand-laid code through the Codegen (labels, held registers) and the all-reduce as pipeline
// passes: compile() with CompileOptions::allreduce gives the image data_parallel_step builds, and
// --dump-after names the pass.
#include <sstream>

#include <gtest/gtest.h>

#include "compiler/codegen.h"
#include "compiler/compiler.h"
#include "compiler/data_parallel.h"
#include "graph/model.h"
#include "support/error_of.h"

namespace tessera::compiler {
namespace {

using isa::Opcode;

TEST(HandLaidCode, OneInstructionPerBundleAndLabelsResolve) {
  const core::CoreSpec spec;
  Codegen cg(spec, false);
  const int top = cg.label(), done = cg.label();
  cg.put(Opcode::SLI, 1, 0, 0, 0, 3);
  cg.bind(top);
  cg.put(Opcode::SADDI, 2, 2, 0, 0, 1);
  cg.join(Opcode::SADDI, 3, 3, 0, 0, 1);
  cg.put_branch(Opcode::BEQ, 2, 1, done);
  cg.put_branch(Opcode::JMP, 0, 0, top);
  cg.bind(done);
  const std::vector<isa::Bundle> code = cg.em().finish();
  ASSERT_EQ(code.size(), 5u);  // sli | saddi ;; saddi | beq | jmp | halt
  EXPECT_EQ(code[1].slot[0].op, Opcode::SADDI);
  EXPECT_EQ(code[1].slot[1].op, Opcode::SADDI);
  EXPECT_EQ(code[2].slot[0].imm, 4);  // done: the halt
  EXPECT_EQ(code[3].slot[0].imm, 1);  // top
  EXPECT_EQ(code[4].slot[0].op, Opcode::HALT);
}

TEST(HandLaidCode, UnboundLabel_bad) {
  const core::CoreSpec spec;
  Codegen cg(spec, false);
  cg.put_branch(Opcode::JMP, 0, 0, cg.label());
  EXPECT_EQ(testing::error_of([&] { cg.em().finish(); }),
            "emitter: a branch to a label that was never bound");
}

TEST(HeldRegs, LowestFromTheBottomHighestFromTheTop) {
  HeldRegs regs(1, 4);
  EXPECT_EQ(regs.take(), 1);
  EXPECT_EQ(regs.take_top(), 4);
  EXPECT_EQ(regs.take(), 2);
  regs.give(1);
  EXPECT_EQ(regs.take(), 1);
  EXPECT_EQ(regs.take(), 3);
  EXPECT_EQ(testing::error_of([&] { regs.take(); }),
            "compiler: out of scalar registers (s1..s4 all held)");
}

// compile() with the all-reduce as its last pass gives the image of data_parallel_step on the
// step compiled as data-parallel training needs it.
void expect_pass_matches_image(int64_t bucket_words, const std::string& pass) {
  const core::CoreSpec spec;
  AllReduceOptions ar;
  ar.processors = 4;
  ar.shard = 8;
  ar.global_batch = 32;
  ar.bucket_words = bucket_words;
  CompileOptions o;
  o.batch = 8;
  o.optimizer.kind = graph::OptimizerKind::kSgd;
  o.allreduce = ar;
  o.dump_after = pass;
  std::ostringstream dump;
  o.dump = &dump;
  const CompiledProgram dp = compile(graph::zoo_spec("mlp"), spec, o);

  CompileOptions step_options = o;
  step_options.allreduce.reset();
  step_options.dump_after.clear();
  step_options.persistent_grads = true;
  step_options.kernel_barriers = bucket_words > 0;
  int64_t gradient_words = 0;
  const graph::Model m = graph::build_model(graph::zoo_spec("mlp"), o.batch);
  for (int id : m.params) gradient_words += graph::num_elements(m.graph.value(id).shape);
  const core::CoreSpec lowered =
      bucket_words > 0
          ? bucket_step_spec(spec, gradient_words, static_cast<int>(m.params.size()), bucket_words)
          : spec;
  const CompiledProgram step = compile(graph::zoo_spec("mlp"), lowered, step_options);
  const DataParallelImage img = data_parallel_step(step, spec, ar);
  EXPECT_EQ(dp.program.code, img.program.code);
  EXPECT_EQ(dp.stats.bundles, static_cast<int64_t>(img.program.code.size()));
  EXPECT_NE(dump.str().find("// ---- after " + pass), std::string::npos);
}

TEST(AllReducePasses, PlainAllReduceIsAPipelinePass) {
  expect_pass_matches_image(0, "allreduce");
}

TEST(AllReducePasses, GradientBucketsAreAPipelinePass) {
  expect_pass_matches_image(4096, "buckets");
}

TEST(AllReducePasses, PassNamesFollowTheOptions) {
  CompileOptions o;
  EXPECT_EQ(pass_names(o), (std::vector<std::string>{"autodiff", "plan-hbm", "lower"}));
  o.allreduce = AllReduceOptions{};
  EXPECT_EQ(pass_names(o).back(), "allreduce");
  o.allreduce->bucket_words = 100;
  EXPECT_EQ(pass_names(o).back(), "buckets");
}

}  // namespace
}  // namespace tessera::compiler
