// The DLRM workload at small sizes: the data generator (deterministic per sample, ids in range
// and Zipf-skewed, labels that follow the planted teacher), the dense part's graph against the
// model written out in double and its autodiff gradients against finite differences, the metrics,
// the compiled dense step on a tensor core against the host graph, and the sharded trainer
// (system/sparse_shard_tables.h) against the host reference: with the dense part on the host bit
// for bit on one processor and within fp32 rounding on four (2 chips x 2 cores, both placements),
// with it on the tensor cores within chip numerics' rounding and timed, the same on any number of
// host threads; and that training learns.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/thread_pool.h"
#include "core/spec.h"
#include "graph/dlrm_model.h"
#include "runtime/binary_metrics.h"
#include "runtime/dlrm_chip_dense.h"
#include "runtime/dlrm_data.h"
#include "runtime/dlrm_dense_step.h"
#include "runtime/dlrm_train.h"
#include "system/system_spec.h"

namespace tessera::runtime {
namespace {

size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

DlrmRecipe small_recipe() {
  DlrmRecipe r;
  r.model.dense = r.data.dense = 5;
  r.model.tables = r.data.tables = 3;
  r.model.rows = r.data.rows = 1000;
  r.model.dim = 4;
  r.model.bottom = {8};
  r.model.top = {8};
  r.data.bag = 3;
  r.batch = 64;
  r.steps = 4;
  r.test = 256;
  r.lr = 0.05;
  return r;
}

core::CoreSpec small_core() {
  core::CoreSpec s;
  s.hbm_bytes = 4 << 20;
  s.vmem_bytes = 64 << 10;
  return s;
}

system::SystemSpec machine(int chips, int cores) {
  system::SystemSpec s;
  s.chips = chips;
  s.chips_per_board = chips;
  s.cores_per_chip = cores;
  s.topology = system::Topology::kLine;
  return s;
}

TEST(DlrmData, SamplesArePureFunctionsOfTheirIndexIdsZipfSkewedLabelsTheTeachers) {
  const DlrmRecipe r = small_recipe();
  const DlrmData data(r.data);
  const DlrmBatch a = data.batch(0, 2000), b = data.batch(150, 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a.labels[at(150 + i)], b.labels[at(i)]);
    EXPECT_EQ(a.dense[at((150 + i) * 5)], b.dense[at(i * 5)]);
    EXPECT_EQ(a.ids[2][at((150 + i) * 3 + 1)], b.ids[2][at(i * 3 + 1)]);
  }
  int low = 0, high = 0;
  for (const auto& ids : a.ids)
    for (uint32_t id : ids) {
      ASSERT_LT(id, 1000u);
      low += id < 10 ? 1 : 0;
      high += id >= 500 ? 1 : 0;
    }
  EXPECT_GT(low, 2 * high);  // the first 10 rows outdraw the last 500
  std::vector<float> teacher;
  for (int i = 0; i < a.n; ++i) teacher.push_back(static_cast<float>(data.teacher_logit(a, i)));
  EXPECT_GT(binary_auc(teacher, a.labels), 0.75);
  EXPECT_THROW(DlrmData({0}), Error);
}

TEST(BinaryMetrics, AucCountsTiesAsHalfAndLogLossIsTheMeanBce) {
  EXPECT_DOUBLE_EQ(binary_auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}), 0.75);
  EXPECT_DOUBLE_EQ(binary_auc({1, 1, 1, 1}, {0, 1, 0, 1}), 0.5);
  EXPECT_DOUBLE_EQ(binary_auc({1, 2}, {1, 1}), 0.5);
  EXPECT_NEAR(binary_log_loss({0.0f, 2.0f}, {1, 0}),
              (std::log(2.0) + 2.0 + std::log1p(std::exp(-2.0))) / 2, 1e-12);
}

// Sample i's pooled bags: pooled[t][i D + d].
DlrmPooled some_bags(const graph::DlrmSpec& m, int n) {
  DlrmPooled pooled(at(m.tables));
  for (int t = 0; t < m.tables; ++t)
    for (int i = 0; i < n * m.dim; ++i)
      pooled[at(t)].push_back(0.3f * std::sin(static_cast<float>(i + 7 * t)));
  return pooled;
}

// y = x W + b over n rows, in double; ReLU when `relu`.
std::vector<double> linear(const std::vector<double>& x, int n, const std::vector<float>& w,
                           const std::vector<float>& b, bool relu) {
  const size_t out = b.size(), in = w.size() / out;
  std::vector<double> y(at(n) * out);
  for (size_t i = 0; i < at(n); ++i)
    for (size_t o = 0; o < out; ++o) {
      double s = b[o];
      for (size_t k = 0; k < in; ++k) s += x[i * in + k] * w[k * out + o];
      y[i * out + o] = relu ? std::max(s, 0.0) : s;
    }
  return y;
}

TEST(DlrmModel, TheGraphComputesTheDocumentedForwardAndBce) {
  // One bottom and one top hidden layer, the dots in lexicographic order, the BCE with logits:
  // written out in double here, against the graph on the host executor in fp32.
  const DlrmRecipe r = small_recipe();
  const graph::DlrmSpec& m = r.model;
  const DlrmBatch b = DlrmData(r.data).batch(0, 5);
  const DlrmParams p = graph::dlrm_init(m, 3);
  ASSERT_EQ(p.size(), 8u);  // bottom 5 -> 8 -> 4, top 4 + 6 -> 8 -> 1: w, b each
  EXPECT_EQ(p[0].size(), 40u);
  EXPECT_EQ(p[4].size(), 80u);
  const DlrmPooled pooled = some_bags(m, b.n);
  DlrmDenseStep step(m);
  const std::vector<float> got = step.forward(p, b, pooled);
  ASSERT_EQ(got.size(), at(b.n));
  const std::vector<double> x(b.dense.begin(), b.dense.end());
  const std::vector<double> z = linear(linear(x, b.n, p[0], p[1], true), b.n, p[2], p[3], true);
  const int D = m.dim, T = m.tables, width = D + T * (T + 1) / 2;
  std::vector<double> in;
  for (int i = 0; i < b.n; ++i) {
    const auto v = [&](int k, int d) {
      return k == 0 ? z[at(i * D + d)] : static_cast<double>(pooled[at(k - 1)][at(i * D + d)]);
    };
    for (int d = 0; d < D; ++d) in.push_back(v(0, d));
    for (int a = 0; a <= T; ++a)
      for (int c = a + 1; c <= T; ++c) {
        double s = 0;
        for (int d = 0; d < D; ++d) s += v(a, d) * v(c, d);
        in.push_back(s);
      }
  }
  ASSERT_EQ(in.size(), at(b.n * width));
  const std::vector<double> want =
      linear(linear(in, b.n, p[4], p[5], true), b.n, p[6], p[7], false);
  for (int i = 0; i < b.n; ++i) EXPECT_NEAR(got[at(i)], want[at(i)], 1e-5) << i;
  // The loss graph's BCE: its value for one sample of logit z and label y is
  // log(1 + e^z) - y z; the step reports binary_log_loss of the logits.
  const DlrmDenseGrads g = step.backward(p, b, pooled, b.n);
  EXPECT_EQ(g.logits, got);
  double bce = 0;
  for (int i = 0; i < b.n; ++i)
    bce += std::log1p(std::exp(want[at(i)])) - b.labels[at(i)] * want[at(i)];
  EXPECT_NEAR(binary_log_loss(g.logits, b.labels), bce / b.n, 1e-6);
}

TEST(DlrmModel, GradientsMatchFiniteDifferences) {
  const DlrmRecipe r = small_recipe();
  const graph::DlrmSpec& m = r.model;
  const DlrmData data(r.data);
  const DlrmBatch b = data.batch(0, 3);
  DlrmParams p = graph::dlrm_init(m, 5);
  DlrmPooled pooled = some_bags(m, b.n);
  DlrmDenseStep step(m);
  const auto loss = [&]() {
    return binary_log_loss(step.forward(p, b, pooled), b.labels) * b.n;  // the sum: scale n
  };
  // The gradients of the sum over the 3 samples: a share of 3 of a global batch of 1.
  const DlrmDenseGrads g = step.backward(p, b, pooled, 1);
  const float h = 1e-2f;
  const auto check = [&](float& x, float analytic, const char* what) {
    const float keep = x;
    x = keep + h;
    const double up = loss();
    x = keep - h;
    const double down = loss();
    x = keep;
    EXPECT_NEAR((up - down) / (2 * h), analytic, 2e-3 + 2e-2 * std::abs(analytic)) << what;
  };
  for (size_t k = 0; k < p.size(); ++k)
    for (size_t i = 0; i < p[k].size(); i += 7) check(p[k][i], g.dense[k][i], "dense parameter");
  for (int t = 0; t < m.tables; ++t)
    for (size_t i = 0; i < pooled[at(t)].size(); i += 3)
      check(pooled[at(t)][i], g.bags[at(t)][i], "pooled embedding");
}

TEST(DlrmModel, BadSizesAndInputsAreErrors_bad) {
  graph::DlrmSpec m = small_recipe().model;
  EXPECT_THROW(graph::build_dlrm(m, 0), Error);
  m.top = {0};
  EXPECT_THROW(graph::build_dlrm(m, 4), Error);
  m = small_recipe().model;
  m.dim = 0;
  EXPECT_THROW(graph::dlrm_init(m, 1), Error);
  // Bags of the wrong size name the bags value.
  const DlrmRecipe r = small_recipe();
  const DlrmBatch b = DlrmData(r.data).batch(0, 4);
  DlrmPooled pooled = some_bags(r.model, b.n);
  pooled[1].pop_back();
  DlrmDenseStep step(r.model);
  try {
    step.forward(graph::dlrm_init(r.model, 1), b, pooled);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bags"), std::string::npos) << e.what();
  }
}

std::vector<double> train(DlrmTrainer& t, const DlrmRecipe& r) {
  return train_dlrm(r, t, nullptr);
}

TEST(DlrmSharded, OneProcessorEqualsTheHostReferenceBitForBit) {
  const DlrmRecipe r = small_recipe();
  DlrmHostTrainer host(r);
  DlrmShardedTrainer chip(r, small_core(), machine(1, 1), system::ShardPlacement::kMod, nullptr,
                          nullptr, DlrmDenseOn::kHost);
  EXPECT_EQ(train(chip, r), train(host, r));
  const DlrmBatch b = DlrmData(r.data).batch(kDlrmTestFirst, 32);
  EXPECT_EQ(chip.predict(b), host.predict(b));
  EXPECT_EQ(chip.figures().steps, 4);
  EXPECT_EQ(chip.figures().id_bytes, 0u);  // nothing leaves the one processor
}

TEST(DlrmSharded, FourProcessorsFollowTheHostReferenceOnAnyNumberOfThreads) {
  const DlrmRecipe r = small_recipe();
  DlrmHostTrainer host(r);
  const std::vector<double> want = train(host, r);
  const DlrmBatch b = DlrmData(r.data).batch(kDlrmTestFirst, 32);
  const std::vector<float> want_logits = host.predict(b);
  for (system::ShardPlacement placement :
       {system::ShardPlacement::kMod, system::ShardPlacement::kTable}) {
    std::vector<std::vector<double>> runs;
    std::vector<DlrmShardFigures> figures;
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      DlrmShardedTrainer chip(r, small_core(), machine(2, 2), placement, &pool, nullptr,
                              DlrmDenseOn::kHost);
      runs.push_back(train(chip, r));
      figures.push_back(chip.figures());
      const std::vector<float> logits = chip.predict(b);
      for (size_t i = 0; i < logits.size(); ++i) EXPECT_NEAR(logits[i], want_logits[i], 1e-4);
    }
    for (size_t s = 0; s < want.size(); ++s) EXPECT_NEAR(runs[0][s], want[s], 1e-5) << s;
    EXPECT_EQ(runs[0], runs[1]);
    EXPECT_EQ(figures[0].cycles, figures[1].cycles);
    EXPECT_EQ(figures[0].packets, figures[1].packets);
    EXPECT_GT(figures[0].grad_bytes, 0u);
    EXPECT_GT(figures[0].dense_bytes, 0u);
    EXPECT_EQ(figures[0].cycles,
              figures[0].lookup_cycles + figures[0].backward_cycles + figures[0].allreduce_cycles);
  }
}

TEST(DlrmTraining, LossFallsAndTheTestAucBeatsChance) {
  DlrmRecipe r = small_recipe();
  r.steps = 60;
  r.lr = 0.1;
  DlrmHostTrainer host(r);
  const std::vector<double> losses = train(host, r);
  EXPECT_LT(losses.back(), losses.front());
  const DlrmEval e = evaluate_dlrm(r, host);
  EXPECT_GT(e.auc, 0.6);
  EXPECT_GT(e.teacher_auc, e.auc);
}

TEST(DlrmRecipeCheck, BadSizesAreUsageErrors_bad) {
  DlrmRecipe r = small_recipe();
  r.model.rows = 999;
  EXPECT_THROW(dlrm_recipe_check(r), UsageError);
  r = small_recipe();
  r.batch = 0;
  EXPECT_THROW(dlrm_recipe_check(r), UsageError);
  r = small_recipe();
  r.batch = 3;
  EXPECT_THROW(
      DlrmShardedTrainer(r, small_core(), machine(2, 2), system::ShardPlacement::kMod, nullptr),
      UsageError);
}

TEST(DlrmChipDense, TheCompiledStepOnATensorCoreFollowsTheHostGraph) {
  // Chip numerics (bf16 products) against the host's fp32: gradients within 2% of each tensor's
  // largest, the loss within 1e-3; processors of one share size run the same cycles.
  const DlrmRecipe r = small_recipe();
  const int n = 16;
  const DlrmBatch b = DlrmData(r.data).batch(0, n);
  const DlrmParams p = graph::dlrm_init(r.model, 3);
  const DlrmPooled pooled = some_bags(r.model, n);
  core::CoreSpec spec;  // priced MACs, bundles and HBM bytes (the built-in spec prices nothing)
  spec.energy.mac_pj = 0.2;
  spec.energy.bundle_fetch_pj = 20;
  spec.energy.hbm_byte_pj = 31.2;
  DlrmChipDense chip(r.model, spec, 2);
  chip.prepare(n);
  const DlrmChipDenseRun a = chip.step(0, p, b, pooled, 4 * n);
  const DlrmChipDenseRun a2 = chip.step(1, p, b, pooled, 4 * n);
  EXPECT_GT(a.cycles, 0);
  EXPECT_EQ(a2.cycles, a.cycles);
  EXPECT_EQ(a2.grads.dense, a.grads.dense);
  // Energy adds up over the cores and their steps: the same step three times, three times one.
  const double two = chip.energy_pj();
  EXPECT_GT(two, 0);
  chip.step(0, p, b, pooled, 4 * n);
  EXPECT_NEAR(chip.energy_pj(), 1.5 * two, 1e-9 * two);
  DlrmDenseStep host(r.model);
  const DlrmDenseGrads want = host.backward(p, b, pooled, 4 * n);
  EXPECT_NEAR(a.loss, binary_log_loss(want.logits, b.labels), 1e-3);
  ASSERT_EQ(a.grads.dense.size(), want.dense.size());
  ASSERT_EQ(a.grads.bags.size(), want.bags.size());
  const auto close = [](const std::vector<float>& got, const std::vector<float>& ref) {
    ASSERT_EQ(got.size(), ref.size());
    float largest = 0;
    for (float v : ref) largest = std::max(largest, std::abs(v));
    EXPECT_GT(largest, 0.0f);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ref[i], 0.02f * largest) << i;
  };
  for (size_t k = 0; k < want.dense.size(); ++k) close(a.grads.dense[k], want.dense[k]);
  for (size_t t = 0; t < want.bags.size(); ++t) close(a.grads.bags[t], want.bags[t]);
}

TEST(DlrmChipDense, BagsOfAnotherSizeAreErrors_bad) {
  const DlrmRecipe r = small_recipe();
  const DlrmBatch b = DlrmData(r.data).batch(0, 8);
  DlrmPooled pooled = some_bags(r.model, b.n);
  pooled[2].pop_back();
  DlrmChipDense chip(r.model, core::CoreSpec{}, 1);
  chip.prepare(b.n);
  EXPECT_THROW(chip.step(0, graph::dlrm_init(r.model, 1), b, pooled, b.n), Error);
}

TEST(DlrmSharded, TensorCoresTrainCloseToTheHostReferenceAndAreTimed) {
  const DlrmRecipe r = small_recipe();
  DlrmHostTrainer host(r);
  const std::vector<double> want = train(host, r);
  std::vector<std::vector<double>> runs;
  std::vector<DlrmShardFigures> figures;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    DlrmShardedTrainer chip(r, core::CoreSpec{}, machine(2, 2), system::ShardPlacement::kMod,
                            &pool);
    runs.push_back(train(chip, r));
    figures.push_back(chip.figures());
  }
  for (size_t s = 0; s < want.size(); ++s) EXPECT_NEAR(runs[0][s], want[s], 2e-3) << s;
  EXPECT_EQ(runs[0], runs[1]);
  const DlrmShardFigures& f = figures[0];
  EXPECT_EQ(f.cycles, figures[1].cycles);
  EXPECT_GT(f.tensor_cycles, 0);
  EXPECT_EQ(f.cycles, f.lookup_cycles + f.tensor_cycles + f.backward_cycles + f.allreduce_cycles);
}

}  // namespace
}  // namespace tessera::runtime
