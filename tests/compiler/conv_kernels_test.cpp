// Convolution and max-pooling kernels (compiler/kernels_conv.h) on the timed core vs the host
// executor's chip numerics (graph/conv_kernels.cpp), bit for bit, on small odd shapes: stride 2,
// padding, ragged MXU tiles and vector chunks, ties in the pooling windows.
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "compiler/compiler.h"
#include "compiler/kernels_conv.h"
#include "core/core.h"
#include "core/spec.h"
#include "graph/kernels.h"
#include "graph/model.h"

namespace tessera::compiler {
namespace {

using graph::kernels::ConvGeom;

core::CoreSpec config(const std::string& name) {
  core::CoreSpec s =
      core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/" + name + ".json");
  s.imem_bundles =
      1 << 20;  // the kernels' straight-line code, not the configured program size, is under test
  return s;
}

std::vector<float> random_values(size_t n, uint64_t seed, bool coarse) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    if (coarse) {  // few distinct values: ties (incl. -0 vs +0) inside pooling windows
      const int k = static_cast<int>(rng.next() % 5);
      x = k == 0 ? -0.0f : k == 1 ? 0.0f : static_cast<float>(k) - 3.5f;
    } else {
      x = static_cast<float>(2.0 * rng.unit() - 1.0);
    }
  }
  return v;
}

constexpr int64_t kIn0 = 0, kIn1 = 1 << 15, kOut = 2 << 15, kScratch = 3 << 15;

// Emits one kernel reading in0 (and in1) and writing `out_words` at kOut; runs it on the timed
// core and returns the output.
std::vector<float> run_kernel(const core::CoreSpec& spec,
                              const std::function<void(Codegen&, CompileStats&, HbmScratch&)>& emit,
                              const std::vector<float>& in0, const std::vector<float>& in1,
                              size_t out_words, bool nested = false) {
  Codegen cg(spec);
  cg.em().set_nested_rolling(nested);
  CompileStats stats;
  HbmScratch scratch{kScratch, spec.hbm_bytes / 4, 0};
  emit(cg, stats, scratch);
  isa::Program prog = cg.finish();
  auto segment = [&](int64_t at, const std::vector<float>& v) {
    std::vector<uint32_t> w(v.size());
    std::memcpy(w.data(), v.data(), v.size() * 4);
    prog.data.push_back(isa::DataSegment{isa::Space::Hbm, static_cast<uint64_t>(at), w});
  };
  segment(kIn0, in0);
  if (!in1.empty()) segment(kIn1, in1);
  // Garbage where the output goes: the kernel must write every word.
  segment(kOut, std::vector<float>(out_words, 1234.5f));
  core::Core core(spec, prog);
  core.run();
  std::vector<float> out(out_words);
  core.state().hbm.read_block(kOut, reinterpret_cast<uint32_t*>(out.data()),
                              static_cast<int64_t>(out_words));
  return out;
}

void expect_bits(const std::vector<float>& chip, const std::vector<float>& host) {
  ASSERT_EQ(chip.size(), host.size());
  size_t diff = 0, first = 0;
  for (size_t i = 0; i < chip.size(); ++i)
    if (std::memcmp(&chip[i], &host[i], 4) != 0 && diff++ == 0) first = i;
  EXPECT_EQ(diff, 0u) << "first at " << first << ": chip " << chip[first] << " host "
                      << host[first];
}

const graph::kernels::Matmul kChipMatmul{graph::Numerics::kChip, false};

ConvGeom conv(int n, int h, int w, int ci, int k, int co, int stride, int pad) {
  return {n,
          h,
          w,
          ci,
          k,
          k,
          co,
          stride,
          pad,
          (h + 2 * pad - k) / stride + 1,
          (w + 2 * pad - k) / stride + 1};
}

size_t x_words(const ConvGeom& g) {
  return static_cast<size_t>(g.n) * g.h * g.w * g.ci;
}
size_t w_words(const ConvGeom& g) {
  return static_cast<size_t>(g.kh) * g.kw * g.ci * g.co;
}
size_t y_words(const ConvGeom& g) {
  return static_cast<size_t>(g.n) * g.oh * g.ow * g.co;
}

// With `nested`, the kernels are emitted as for a program rolled nested (the GEMMs' regular
// schedule).
void check_conv(const std::string& cfg, const ConvGeom& g, bool nested = false) {
  const core::CoreSpec spec = config(cfg);
  const std::vector<float> x = random_values(x_words(g), 1, false),
                           w = random_values(w_words(g), 2, false);
  const std::vector<float> dy = random_values(y_words(g), 3, false);
  {
    std::vector<float> host(y_words(g));
    graph::kernels::conv2d(x.data(), w.data(), host.data(), g, kChipMatmul);
    expect_bits(run_kernel(
                    spec,
                    [&](Codegen& cg, CompileStats& st, HbmScratch& s) {
                      emit_conv2d(cg, st, s, "y", kIn0, kIn1, kOut, g);
                    },
                    x, w, host.size(), nested),
                host);
  }
  {
    std::vector<float> host(x_words(g));
    graph::kernels::conv2d_input_grad(dy.data(), w.data(), host.data(), g, kChipMatmul);
    expect_bits(run_kernel(
                    spec,
                    [&](Codegen& cg, CompileStats& st, HbmScratch& s) {
                      emit_conv2d_input_grad(cg, st, s, "dx", kIn0, kIn1, kOut, g);
                    },
                    dy, w, host.size(), nested),
                host);
  }
  {
    std::vector<float> host(w_words(g));
    graph::kernels::conv2d_weight_grad(x.data(), dy.data(), host.data(), g, kChipMatmul);
    expect_bits(run_kernel(
                    spec,
                    [&](Codegen& cg, CompileStats& st, HbmScratch& s) {
                      emit_conv2d_weight_grad(cg, st, s, "dw", kIn0, kIn1, kOut, g);
                    },
                    x, dy, host.size(), nested),
                host);
  }
}

TEST(ConvKernels, Stride2Pad1OddShapesMatchHostChipNumericsForwardAndBothGradients) {
  check_conv("small", conv(2, 7, 5, 3, 3, 5, 2, 1));
}

TEST(ConvKernels, Stride1Pad2Kernel5AsInTheCnnMatchesOnBothConfigs) {
  check_conv("small", conv(2, 6, 6, 2, 5, 3, 1, 2));
  check_conv("tpu-v2-like", conv(3, 9, 7, 3, 5, 6, 1, 2));
}

TEST(ConvKernels, NoPaddingAndPaddingWiderThanTheKernelMatch) {
  check_conv("small", conv(1, 6, 7, 2, 2, 3, 2, 0));
  check_conv("small", conv(1, 4, 3, 1, 2, 2, 1, 2));
}

TEST(ConvKernels, KernelRowsAcrossMxuTilesOneByOneAndChunksSplittingImagesMatch) {
  // 3 x 3 x 100: K = 900, each kernel row's 300 words cut where a 128-word K tile ends.
  check_conv("tpu-v2-like", conv(2, 6, 5, 100, 3, 7, 1, 1));
  // 1 x 1 with stride 2, channels one past the MXU: a K tile of 2.
  check_conv("tpu-v2-like", conv(3, 5, 7, 129, 1, 9, 2, 0));
  // Vector memory holds 14 lines of this panel: the chunks split the second image, and the last
  // chunk is shorter (another panel layout).
  check_conv("small", conv(3, 9, 9, 3, 3, 4, 1, 1));
  // One output column per line, batch 1.
  check_conv("small", conv(1, 5, 3, 2, 3, 3, 1, 0));
}

TEST(ConvKernels, NestedRollingWithTheGemmsRegularScheduleMatches) {
  check_conv("tpu-v2-like", conv(2, 6, 5, 100, 3, 7, 1, 1), true);
  check_conv("small", conv(3, 9, 9, 3, 3, 4, 1, 1), true);
  // ResNet's stem: 7 x 7 / 2, 3 channels (K = 147).
  check_conv("tpu-v2-like", conv(1, 20, 20, 3, 7, 8, 2, 3), true);
}

// Input gradients flip and transpose the kernel per tap: on the transpose unit when both channel
// counts are whole lanes-wide blocks (128 on tpu-v2-like), by element-strided DMAs otherwise. Both
// paths give the host's values; the program shows which one ran.
TEST(ConvKernels, WholeBlockChannelsFlipTheKernelOnTheTransposeUnit) {
  // Kernels of at most 2^15 words (the test's input regions): 2 x 1 taps of 128 x 128, and 1 x 1
  // taps of 256 x 128 (2 x 1 blocks) and 128 x 256 (1 x 2 blocks) with stride 2.
  const ConvGeom two_taps{2, 4, 3, 128, 2, 1, 128, 1, 0, 3, 3};
  check_conv("tpu-v2-like", two_taps);
  check_conv("tpu-v2-like", conv(1, 4, 4, 256, 1, 128, 1, 0));
  check_conv("tpu-v2-like", conv(2, 5, 3, 128, 1, 256, 2, 0), true);
  const core::CoreSpec spec = config("tpu-v2-like");
  const auto xu_pushes = [&](const ConvGeom& g) {
    Codegen cg(spec);
    CompileStats stats;
    HbmScratch scratch{kScratch, spec.hbm_bytes / 4, 0};
    emit_conv2d_input_grad(cg, stats, scratch, "dx", kIn0, kIn1, kOut, g);
    int64_t n = 0;
    for (const isa::Bundle& b : cg.finish().code)
      for (const isa::Instr& in : b.slot) n += in.op == isa::Opcode::XPUSH;
    return n;
  };
  EXPECT_GT(xu_pushes(two_taps), 0);
  EXPECT_EQ(xu_pushes(conv(1, 4, 4, 100, 1, 128, 1, 0)), 0);  // 100 channels: the DMA path
  // The block loops are rolled: 2 x 1 blocks cost no more code than one block.
  EXPECT_EQ(xu_pushes(conv(1, 4, 4, 256, 1, 128, 1, 0)),
            xu_pushes(conv(1, 4, 4, 128, 1, 128, 1, 0)));
}

// The HBM scratch of each kernel: the forward and input-gradient GEMMs read their operand from
// the (padded or dilated) activations directly, so no im2col matrix is held; the weight gradient
// holds the transposed matrix (its GEMM's A).
TEST(ConvKernels, ScratchHoldsNoIm2colMatrixForTheForwardAndInputGradient) {
  const core::CoreSpec spec = config("small");
  const ConvGeom g = conv(2, 7, 5, 3, 3, 5, 2, 1);
  auto scratch_of = [&](const std::function<void(Codegen&, CompileStats&, HbmScratch&)>& emit) {
    Codegen cg(spec);
    CompileStats st;
    HbmScratch s{kScratch, spec.hbm_bytes / 4, 0};
    emit(cg, st, s);
    EXPECT_EQ(st.gemms, 1);
    return s.peak;
  };
  const int64_t padded = 2 * 9 * 7 * 3, dilated = 2 * 9 * 7 * 5, flipped = 3 * 3 * 5 * 3;
  const int64_t im2col = int64_t{2} * g.oh * g.ow * 3 * 3 * 3;
  EXPECT_EQ(scratch_of([&](Codegen& cg, CompileStats& st, HbmScratch& s) {
              emit_conv2d(cg, st, s, "y", kIn0, kIn1, kOut, g);
            }),
            padded);
  EXPECT_EQ(scratch_of([&](Codegen& cg, CompileStats& st, HbmScratch& s) {
              emit_conv2d_input_grad(cg, st, s, "dx", kIn0, kIn1, kOut, g);
            }),
            dilated + flipped);
  EXPECT_EQ(scratch_of([&](Codegen& cg, CompileStats& st, HbmScratch& s) {
              emit_conv2d_weight_grad(cg, st, s, "dw", kIn0, kIn1, kOut, g);
            }),
            padded + im2col);
  // Without padding the forward convolution needs no scratch at all.
  EXPECT_EQ(scratch_of([&](Codegen& cg, CompileStats& st, HbmScratch& s) {
              emit_conv2d(cg, st, s, "y", kIn0, kIn1, kOut, conv(1, 6, 7, 2, 2, 3, 2, 0));
            }),
            0);
}

ConvGeom pool(int n, int h, int w, int c, int k, int stride) {
  return {n, h, w, c, k, k, c, stride, 0, (h - k) / stride + 1, (w - k) / stride + 1};
}

void check_pool(const std::string& cfg, const ConvGeom& g) {
  const core::CoreSpec spec = config(cfg);
  const std::vector<float> x = random_values(x_words(g), 4, true);
  const std::vector<float> dy =
      random_values(static_cast<size_t>(g.n) * g.oh * g.ow * g.ci, 5, true);
  std::vector<float> y(dy.size()), dx(x.size());
  graph::kernels::maxpool2d(x.data(), y.data(), g);
  graph::kernels::maxpool2d_grad(dy.data(), x.data(), dx.data(), g);
  expect_bits(run_kernel(
                  spec,
                  [&](Codegen& cg, CompileStats&, HbmScratch&) {
                    emit_maxpool2d(cg, "pool", kIn0, kOut, g);
                  },
                  x, {}, y.size()),
              y);
  expect_bits(run_kernel(
                  spec,
                  [&](Codegen& cg, CompileStats&, HbmScratch&) {
                    emit_maxpool2d_grad(cg, "dpool", kIn0, kIn1, kOut, g);
                  },
                  dy, x, dx.size()),
              dx);
}

TEST(PoolKernels, MaxPoolForwardAndBackwardMatchTheHostWithTiesAndUncoveredEdges) {
  check_pool("small", pool(2, 7, 6, 3, 2, 2));  // last input row covered by no window
  check_pool("small", pool(3, 4, 4, 5, 2, 2));
  check_pool("small", pool(1, 7, 7, 2, 2, 3));  // stride > window: gaps between windows
  check_pool("tpu-v2-like", pool(2, 14, 14, 8, 2, 2));
}

// Overlapping windows (ResNet's 3x3 / 2 max pool): every input's terms added in the host's
// (oh, ow) order, also across chunks of lines (the small config's vector memory splits them).
TEST(PoolKernels, OverlappingWindowsInTheBackwardMatchTheHostsSummationOrder) {
  check_pool("small", pool(1, 5, 5, 1, 3, 2));
  check_pool("small", pool(2, 9, 9, 3, 3, 2));
  check_pool("small", pool(1, 6, 7, 2, 3, 1));  // stride 1: up to 9 terms per input
  check_pool("tpu-v2-like", pool(2, 18, 18, 8, 3, 2));
}

}  // namespace
}  // namespace tessera::compiler

namespace tessera::compiler {
namespace {

TEST(ConvLowering, CnnTrainingStepCompilesWithOneGemmPerConvolutionAndItsGradients) {
  const core::CoreSpec spec = config("tpu-v2-like");
  CompileOptions o;
  o.batch = 2;
  const CompiledProgram p = compile(graph::zoo_spec("cnn_small"), spec, o);
  // conv1, conv2, dense forward; weight gradients of all three; input gradients of conv2 and dense.
  EXPECT_EQ(p.stats.gemms, 3 + 3 + 2);
  const int64_t conv1 = 2 * 28 * 28 * 25 * 4, conv2 = 2 * 14 * 14 * 100 * 8, dense = 2 * 392 * 10;
  EXPECT_EQ(p.stats.mxu_macs, 3 * (conv1 + conv2 + dense) - conv1);
  EXPECT_LE(p.stats.vmem_peak_rows, spec.vmem_rows());
}

TEST(ConvLowering, InferenceHbmHoldsThePlanAndOnePaddedCopyBeyondIt) {
  std::ostringstream os;
  CompileOptions o;
  o.batch = 2;
  o.training = false;
  o.dump_after = "plan-hbm";
  o.dump = &os;
  const CompiledProgram p = compile(graph::zoo_spec("cnn_small"), config("tpu-v2-like"), o);
  // Lines "hbm ADDR +WORDS ...": the plan ends at the largest ADDR + WORDS.
  std::istringstream in(os.str());
  int64_t plan_end = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("hbm ", 0) != 0) continue;
    std::istringstream f(line.substr(4));
    int64_t addr = 0, words = 0;
    char plus = 0;
    f >> addr >> plus >> words;
    plan_end = std::max(plan_end, addr + words);
  }
  // Beyond the plan: conv2's padded input [2, 18, 18, 4] (conv1's [2, 32, 32, 1] is smaller), no
  // im2col matrix.
  EXPECT_EQ(p.stats.hbm_words - plan_end, 2 * 18 * 18 * 4);
}

TEST(ConvLowering, FlattenAndItsGradientAliasTheirInputs) {
  std::ostringstream os;
  CompileOptions o;
  o.batch = 2;
  o.dump_after = "plan-hbm";
  o.dump = &os;
  compile(graph::zoo_spec("cnn_small"), config("tpu-v2-like"), o);
  // Lines "hbm ADDR +WORDS NAME SHAPE ...": every [2, 392] value (the flatten, and the gradient
  // reshaped back is [2, 7, 7, 8]) shares its address with a [2, 7, 7, 8] value.
  std::istringstream in(os.str());
  std::set<std::string> pooled, flat;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("hbm ", 0) != 0) continue;
    const std::string addr = line.substr(4, line.find(' ', 4) - 4);
    if (line.find(" [2, 392]") != std::string::npos) flat.insert(addr);
    if (line.find(" [2, 7, 7, 8]") != std::string::npos) pooled.insert(addr);
  }
  ASSERT_FALSE(flat.empty());
  for (const std::string& a : flat) EXPECT_EQ(pooled.count(a), 1u) << a;
}

TEST(ConvLowering, ConvolutionLineTooWideForVectorMemory_bad) {
  core::CoreSpec spec = config("small");
  spec.hbm_bytes = 64 << 20;
  const graph::ModelSpec wide{"wide",
                              {2, 300, 8},
                              10,
                              {graph::LayerSpec{graph::LayerKind::kConv2D, 16, 5, 1, 2},
                               graph::LayerSpec{graph::LayerKind::kFlatten},
                               graph::LayerSpec{graph::LayerKind::kDense, 10}}};
  CompileOptions o;
  o.batch = 1;
  try {
    compile(wide, spec, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "compiler: tensor 'conv1.conv.im2col': one im2col line (300 x 200) needs 60000 "
                 "words; vector memory "
                 "holds 16384 words");
  }
}

}  // namespace
}  // namespace tessera::compiler
