// The transformer ops' kernels of the compiled program on the timed core vs the host executor's
// chip numerics (graph/transformer_kernels.cpp), bit for bit, on small odd shapes: rows not a
// multiple of the sublanes, rows narrower and wider than the lanes (one, three and four blocks).
#include "graph/transformer_kernels.h"

#include <cstring>
#include <functional>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "compiler/kernels_rows.h"
#include "core/core.h"
#include "core/spec.h"
#include "graph/kernels.h"
#include "support/bit_equal.h"
#include "support/kernel_config.h"

namespace tessera::compiler {
namespace {

using testing::expect_bit_equal;
using testing::kernel_config;

using graph::Numerics;

std::vector<float> random_values(size_t n, uint64_t seed, double scale = 1.0) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(scale * (2.0 * rng.unit() - 1.0));
  return v;
}

constexpr int64_t kSlot = 1 << 16;  // input i at i * kSlot, the output after the inputs

// Emits one kernel reading the inputs and writing `out_words` after them; runs it on the timed
// core and returns the output.
std::vector<float> run_kernel(
    const core::CoreSpec& spec,
    const std::function<void(Codegen&, const std::vector<int64_t>&, int64_t, HbmScratch&)>& emit,
    const std::vector<std::vector<float>>& ins, size_t out_words) {
  Codegen cg(spec);
  std::vector<int64_t> at;
  for (size_t i = 0; i < ins.size(); ++i) at.push_back(static_cast<int64_t>(i) * kSlot);
  const int64_t out = static_cast<int64_t>(ins.size()) * kSlot;
  HbmScratch scratch{out + kSlot, spec.hbm_bytes / 4, 0};
  emit(cg, at, out, scratch);
  isa::Program prog = cg.finish();
  auto segment = [&](int64_t addr, const std::vector<float>& v) {
    std::vector<uint32_t> w(v.size());
    std::memcpy(w.data(), v.data(), v.size() * 4);
    prog.data.push_back(isa::DataSegment{isa::Space::Hbm, static_cast<uint64_t>(addr), w});
  };
  for (size_t i = 0; i < ins.size(); ++i) segment(at[i], ins[i]);
  segment(out, std::vector<float>(out_words, 1234.5f));  // the kernel must write every word
  core::Core core(spec, prog);
  core.run();
  std::vector<float> result(out_words);
  core.state().hbm.read_block(out, reinterpret_cast<uint32_t*>(result.data()),
                              static_cast<int64_t>(out_words));
  return result;
}

struct RowCase {
  const char* config;
  long rows;
  int D;
};
// small: 2 sublanes x 8 lanes; tpu-v2-like: 8 x 128.
const RowCase kRowCases[] = {
    {"small", 7, 3},  {"small", 5, 8},         {"small", 9, 13},         {"small", 3, 21},
    {"small", 4, 29}, {"tpu-v2-like", 19, 32}, {"tpu-v2-like", 11, 200}, {"tpu-v2-like", 3, 300}};

std::string label(const RowCase& c) {
  return std::string(c.config) + " " + std::to_string(c.rows) + "x" + std::to_string(c.D);
}

TEST(RowKernels, LayerNormAndBothGradientsMatchHostChipNumerics) {
  for (const RowCase& c : kRowCases) {
    const core::CoreSpec spec = kernel_config(c.config);
    const size_t n = static_cast<size_t>(c.rows) * c.D;
    const double eps = 1e-5;
    std::vector<float> x = random_values(n, 1, 3.0), dy = random_values(n, 2);
    const std::vector<float> gain = random_values(static_cast<size_t>(c.D), 3),
                             bias = random_values(static_cast<size_t>(c.D), 4);
    for (int j = 0; j < c.D; ++j) x[static_cast<size_t>(j)] = -0.0f;  // a row of -0
    std::vector<float> y(n), dx(n), dg(static_cast<size_t>(c.D));
    graph::kernels::layer_norm(x.data(), gain.data(), bias.data(), y.data(), c.rows, c.D, eps,
                               Numerics::kChip);
    graph::kernels::layer_norm_grad(dy.data(), x.data(), gain.data(), dx.data(), c.rows, c.D, eps,
                                    Numerics::kChip);
    graph::kernels::layer_norm_gain_grad(dy.data(), x.data(), dg.data(), c.rows, c.D, eps,
                                         Numerics::kChip);
    expect_bit_equal(
        run_kernel(
            spec,
            [&](Codegen& cg, const std::vector<int64_t>& in, int64_t out, HbmScratch&) {
              emit_layer_norm(cg, "ln", in[0], in[1], in[2], out, c.rows, c.D, eps);
            },
            {x, gain, bias}, n),
        y, "layer_norm " + label(c));
    expect_bit_equal(
        run_kernel(
            spec,
            [&](Codegen& cg, const std::vector<int64_t>& in, int64_t out, HbmScratch&) {
              emit_layer_norm_grad(cg, "dln", in[0], in[1], in[2], out, c.rows, c.D, eps);
            },
            {dy, x, gain}, n),
        dx, "layer_norm_grad " + label(c));
    if (spec.sublanes != 8) continue;  // the host's column sums run over 8 sublanes
    expect_bit_equal(
        run_kernel(
            spec,
            [&](Codegen& cg, const std::vector<int64_t>& in, int64_t out, HbmScratch& s) {
              emit_layer_norm_gain_grad(cg, s, "dgain", in[0], in[1], out, c.rows, c.D, eps);
            },
            {dy, x}, dg.size()),
        dg, "layer_norm_gain_grad " + label(c));
  }
}

TEST(RowKernels, SoftmaxCausalAndNotAndItsGradientMatchHostChipNumerics) {
  struct Case {
    const char* config;
    long batches;
    int S, T;
  };
  // Rows per matrix not a multiple of the sublanes (the causal limits wrap inside a vreg), fewer
  // rows than columns, one and several blocks per row.
  const Case cases[] = {{"small", 3, 3, 3},         {"small", 2, 5, 7},
                        {"small", 2, 13, 13},       {"small", 1, 9, 21},
                        {"tpu-v2-like", 2, 16, 16}, {"tpu-v2-like", 3, 5, 5},
                        {"tpu-v2-like", 1, 7, 200}, {"tpu-v2-like", 2, 130, 130}};
  for (const Case& c : cases) {
    const core::CoreSpec spec = kernel_config(c.config);
    const size_t n = static_cast<size_t>(c.batches) * c.S * c.T;
    const std::vector<float> x = random_values(n, 5, 4.0), dy = random_values(n, 6);
    const std::string what = std::string(c.config) + " " + std::to_string(c.batches) + "x" +
                             std::to_string(c.S) + "x" + std::to_string(c.T);
    for (bool causal : {false, true}) {
      std::vector<float> y(n), dx(n);
      graph::kernels::softmax(x.data(), y.data(), c.batches, c.S, c.T, causal, Numerics::kChip);
      graph::kernels::softmax_grad(dy.data(), y.data(), dx.data(), c.batches * c.S, c.T,
                                   Numerics::kChip);
      expect_bit_equal(
          run_kernel(
              spec,
              [&](Codegen& cg, const std::vector<int64_t>& in, int64_t out, HbmScratch&) {
                emit_softmax(cg, "sm", in[0], out, c.batches, c.S, c.T, causal);
              },
              {x}, n),
          y, "softmax " + what + (causal ? " causal" : ""));
      expect_bit_equal(
          run_kernel(
              spec,
              [&](Codegen& cg, const std::vector<int64_t>& in, int64_t out, HbmScratch&) {
                emit_softmax_grad(cg, "dsm", in[0], in[1], out, c.batches * c.S, c.T);
              },
              {dy, y}, n),
          dx, "softmax_grad " + what + (causal ? " causal" : ""));
    }
  }
}

TEST(RowKernels, CrossEntropyOverMoreClassesThanLanesMatchesHostChipNumerics) {
  struct Case {
    const char* config;
    int batch, classes;
  };
  // The loss's mean runs over the host's 8 sublanes: the loss is compared on tpu-v2-like only.
  const Case cases[] = {{"small", 5, 21},
                        {"small", 6, 32},
                        {"tpu-v2-like", 13, 256},
                        {"tpu-v2-like", 32, 200},
                        {"tpu-v2-like", 3, 129}};
  for (const Case& c : cases) {
    const core::CoreSpec spec = kernel_config(c.config);
    const size_t n = static_cast<size_t>(c.batch) * c.classes;
    const std::vector<float> x = random_values(n, 7, 6.0);
    SplitMix64 rng(8);
    std::vector<int32_t> labels(static_cast<size_t>(c.batch));
    for (int32_t& l : labels) l = static_cast<int32_t>(rng.next() % c.classes);
    std::vector<float> label_words(labels.size());
    std::memcpy(label_words.data(), labels.data(), labels.size() * 4);
    std::vector<float> loss(1), grad(n);
    graph::kernels::softmax_xent(x.data(), labels.data(), loss.data(), c.batch, c.classes,
                                 Numerics::kChip);
    graph::kernels::softmax_xent_grad(x.data(), labels.data(), 1.0f, grad.data(), c.batch,
                                      c.classes, Numerics::kChip);
    const std::string what =
        std::string(c.config) + " " + std::to_string(c.batch) + "x" + std::to_string(c.classes);
    expect_bit_equal(
        run_kernel(
            spec,
            [&](Codegen& cg, const std::vector<int64_t>& in, int64_t out, HbmScratch&) {
              emit_softmax_xent_rows(cg, "xent", in[0], in[1], -1, out, c.batch, c.classes);
            },
            {x, label_words}, n),
        grad, "softmax_cross_entropy_grad " + what);
    if (spec.sublanes != 8) continue;
    expect_bit_equal(
        run_kernel(
            spec,
            [&](Codegen& cg, const std::vector<int64_t>& in, int64_t out, HbmScratch&) {
              emit_softmax_xent_rows(cg, "xent", in[0], in[1], out, -1, c.batch, c.classes);
            },
            {x, label_words}, 1),
        loss, "softmax_cross_entropy " + what);
  }
}

TEST(RowKernels, CausalSoftmaxWithMoreRowsThanColumns_bad) {
  const core::CoreSpec spec = kernel_config("small");
  Codegen cg(spec);
  try {
    emit_softmax(cg, "sm", 0, kSlot, 1, 5, 4, true);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "compiler: softmax 'sm': a causal mask over 5 x 4 leaves rows without a column");
  }
}

}  // namespace
}  // namespace tessera::compiler
