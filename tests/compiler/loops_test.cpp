// Code size of the compiled step: the GEMM, im2col and pooling kernels emit counted loops, so the
// program no longer grows in proportion to the batch; a program that still exceeds the
// instruction memory is a clear error.
#include <string>

#include <gtest/gtest.h>

#include "compiler/compiler.h"
#include "core/spec.h"
#include "graph/model.h"
#include "isa/opcodes.h"
#include "support/error_of.h"

namespace tessera::compiler {
namespace {

core::CoreSpec tpu_v2_like() {
  return core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
}

CompiledProgram compile_cnn(int batch) {
  CompileOptions o;
  o.batch = batch;
  return compile(graph::zoo_spec("cnn"), tpu_v2_like(), o);
}

int64_t loops_in(const isa::Program& p) {
  int64_t n = 0;
  for (const isa::Bundle& b : p.code)
    for (const isa::Instr& in : b.slot) n += in.op == isa::Opcode::LOOP;
  return n;
}

// Straight-line code took 35,991 bundles at batch 8 and 64,280 at batch 16 (1.79x).
TEST(CompiledLoops, CnnCodeGrowsFarSlowerThanTheBatch) {
  const CompiledProgram b8 = compile_cnn(8);
  const CompiledProgram b16 = compile_cnn(16);
  EXPECT_GT(loops_in(b8.program), 20);
  EXPECT_LT(b16.stats.bundles, 20000);
  EXPECT_LT(static_cast<double>(b16.stats.bundles) / static_cast<double>(b8.stats.bundles), 1.5);
}

TEST(CompiledLoops, ProgramLongerThanTheInstructionMemory_bad) {
  core::CoreSpec spec = tpu_v2_like();
  spec.imem_bundles = 1024;
  CompileOptions o;
  o.batch = 128;
  EXPECT_EQ(tessera::testing::error_of([&] { compile(graph::zoo_spec("mlp"), spec, o); }),
            "compiler: the program needs 2317 bundles; instruction memory holds 1024");
}

}  // namespace
}  // namespace tessera::compiler
