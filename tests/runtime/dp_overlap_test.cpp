// The bucketed gradient all-reduce overlapped with the backward pass (compiler/data_parallel.h,
// DataParallelOptions::bucket_words / overlap): the same losses and weights bit for bit as the
// same buckets run after the backward pass, replicas identical after every step (ragged shards,
// 5% link loss), exchange hidden behind compute where the buckets are bandwidth-bound, the torus
// algorithm in the buckets, bad options.
#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "compiler/data_parallel.h"
#include "runtime/data_parallel.h"
#include "support/error_of.h"

namespace tessera::runtime {
namespace {

using chip_test::machine;

DataParallelOptions options(const system::SystemSpec& sys, int batch, int64_t bucket_words,
                            bool overlap) {
  DataParallelOptions o;
  o.trainer.batch = batch;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-3;
  o.system = sys;
  o.bucket_words = bucket_words;
  o.overlap = overlap;
  o.check_replicas = true;  // every step: every processor's weights equal processor 0's
  return o;
}

struct Trained {
  std::vector<double> losses;
  std::vector<std::vector<float>> params;
  DataParallelTotals totals;
  int buckets = 0, overlapped = 0;
};

Trained train(const graph::ModelSpec& model, const DataParallelOptions& o, int steps) {
  DataParallelTrainer t(model, chip_test::tpu_v2_like(), o);
  Trained r;
  for (int s = 0; s < steps; ++s) {
    const chip_test::SampleBatch d =
        chip_test::synthetic_batch(o.trainer.batch, 500 + static_cast<uint64_t>(s));
    r.losses.push_back(t.step(d.images.data(), d.labels.data(), o.trainer.batch));
  }
  r.params = t.params(t.processors() - 1);
  r.totals = t.totals();
  r.buckets = t.first_image().buckets;
  r.overlapped = t.first_image().overlapped_supersteps;
  return r;
}

int64_t overlap_ps(const DataParallelTotals& t) {
  return t.compute_ps + t.exchange_ps - t.wall_ps;
}

// mlp gradients in the order they are final: W3 + b3 + W2 + b2 (34186 words), then W1 + b1
// (200960): buckets of 40000 words give two, the first all-reduced during W1's backward kernels.
constexpr int64_t kMlpBucket = 40000;

TEST(DataParallelOverlap, OverlappedBucketsEqualTheSameBucketsAfterBackwardBitForBit) {
  const graph::ModelSpec mlp = graph::zoo_spec("mlp");
  // 7 samples: ragged shards on 2 (4, 3), 3 (3, 2, 2) and 2 x 2 (2, 2, 2, 1) processors.
  for (const auto& [chips, cores] : std::vector<std::pair<int, int>>{{2, 1}, {3, 1}, {2, 2}}) {
    const system::SystemSpec sys = machine(chips, cores, 0.05);
    const Trained on = train(mlp, options(sys, 7, kMlpBucket, true), 3);
    const Trained off = train(mlp, options(sys, 7, kMlpBucket, false), 3);
    EXPECT_EQ(on.losses, off.losses) << chips << " x " << cores;
    EXPECT_EQ(chip_test::differing_words(on.params, off.params), 0u) << chips << " x " << cores;
    EXPECT_EQ(on.buckets, 2);
    EXPECT_GT(on.overlapped, 0);
    EXPECT_EQ(off.overlapped, 0);
    EXPECT_GT(on.totals.retransmissions, 0u);
    EXPECT_GT(overlap_ps(on.totals), 0) << chips << " x " << cores;
    EXPECT_LE(overlap_ps(off.totals), 0) << chips << " x " << cores;
  }
}

TEST(DataParallelOverlap, OneBucketPerParameterAlsoMatchesAndTrainsLikeThePlainSchedule) {
  // Buckets of 1 word: every gradient its own bucket (none is split), six buckets in lockstep.
  const graph::ModelSpec mlp = graph::zoo_spec("mlp");
  const system::SystemSpec sys = machine(3, 1, 0);
  const Trained on = train(mlp, options(sys, 6, 1, true), 2);
  const Trained off = train(mlp, options(sys, 6, 1, false), 2);
  const Trained plain = train(mlp, options(sys, 6, 0, true), 2);
  EXPECT_EQ(on.buckets, 6);
  EXPECT_EQ(on.losses, off.losses);
  EXPECT_EQ(chip_test::differing_words(on.params, off.params), 0u);
  // Another cut of the gradient into fragments: the same sums in another order.
  for (size_t s = 0; s < plain.losses.size(); ++s)
    EXPECT_NEAR(on.losses[s], plain.losses[s], 1e-6) << s;
}

TEST(DataParallelOverlap, OverlapShortensTheStepWhereTheEarlyBucketIsBandwidthBound) {
  // 2 chips over a slow link (2 GB/s): the first bucket's 137 KB take longer on the wire than the
  // barriers cost, and W1's backward kernels run meanwhile instead of after it.
  const graph::ModelSpec mlp = graph::zoo_spec("mlp");
  system::SystemSpec sys = machine(2, 1, 0);
  sys.link_gbytes_per_s = 2;
  const Trained on = train(mlp, options(sys, 16, kMlpBucket, true), 2);
  const Trained off = train(mlp, options(sys, 16, kMlpBucket, false), 2);
  EXPECT_EQ(on.losses, off.losses);
  EXPECT_LT(on.totals.wall_ps, off.totals.wall_ps);
  EXPECT_GT(overlap_ps(on.totals), 0);
  EXPECT_EQ(on.totals.exchange_bytes, off.totals.exchange_bytes);
}

TEST(DataParallelOverlap, BucketsThatDoNotFitBesideTheKernels_bad) {
  core::CoreSpec small = chip_test::tpu_v2_like();
  small.vmem_bytes = 512 * 1024;  // 1024 rows of 128 lanes
  EXPECT_EQ(testing::error_of([&] { compiler::bucket_step_spec(small, 235146, 6, 40000); }),
            "data-parallel: the gradient buckets (235146 words in 6 parameters) need 1888 "
            "vector-memory rows; at most "
            "half of the 1024 rows may be reserved (the kernels keep the rest)");
  EXPECT_EQ(testing::error_of([&] { compiler::bucket_step_spec(small, 100, 1, 0); }),
            "data-parallel: bucket of 0 words: need at least 1");
  EXPECT_EQ(testing::error_of([&] {
              DataParallelTrainer t(graph::zoo_spec("mlp"), small,
                                    options(machine(2, 1, 0), 4, kMlpBucket, true));
            }),
            "data-parallel: the gradient buckets (235146 words in 6 parameters) need 1888 "
            "vector-memory rows; at most "
            "half of the 1024 rows may be reserved (the kernels keep the rest)");
}

// The torus all-reduce inside the buckets (its supersteps one at a time, collective_step_asm):
// overlapped = the same buckets after backward, bit for bit, on a 2 x 2 grid (2 chips x 2 cores)
// and a 2 x 2 torus of chips with 2 cores (grid 2 x 2 x 2), in fewer supersteps than the ring's
// buckets; on a 1-D grid (a one-core ring of chips) the same values as the ring's buckets.
TEST(DataParallelOverlap, TorusBucketsOverlappedEqualTheSameBucketsAfterBackwardBitForBit) {
  const graph::ModelSpec mlp = graph::zoo_spec("mlp");
  system::SystemSpec pod = machine(4, 2, 0);
  pod.topology = system::Topology::kTorus2d;
  pod.dims_x = pod.dims_y = 2;
  for (const system::SystemSpec& sys : {machine(2, 2, 0.05), pod}) {
    DataParallelOptions on_o = options(sys, 11, kMlpBucket, true),
                        off_o = options(sys, 11, kMlpBucket, false);
    on_o.allreduce = off_o.allreduce = compiler::CollectiveAlgorithm::kTorus;
    const Trained on = train(mlp, on_o, 2);
    const Trained off = train(mlp, off_o, 2);
    const Trained ring = train(mlp, options(sys, 11, kMlpBucket, true), 2);
    const std::string what = std::to_string(sys.chips) + " chips";
    EXPECT_EQ(on.losses, off.losses) << what;
    EXPECT_EQ(chip_test::differing_words(on.params, off.params), 0u) << what;
    EXPECT_EQ(on.buckets, 2) << what;
    EXPECT_GT(on.overlapped, 0) << what;
    EXPECT_LT(on.totals.supersteps, ring.totals.supersteps) << what;
    for (size_t s = 0; s < on.losses.size(); ++s)
      EXPECT_NEAR(on.losses[s], ring.losses[s], 1e-5) << what << " step " << s;
  }
  const system::SystemSpec line = machine(3, 1, 0);
  DataParallelOptions torus_o = options(line, 6, kMlpBucket, true);
  torus_o.allreduce = compiler::CollectiveAlgorithm::kTorus;
  const Trained by_torus = train(mlp, torus_o, 2),
                by_ring = train(mlp, options(line, 6, kMlpBucket, true), 2);
  EXPECT_EQ(by_torus.losses, by_ring.losses);
  EXPECT_EQ(chip_test::differing_words(by_torus.params, by_ring.params), 0u);
}

TEST(DataParallelOverlap, AStepWithoutKernelBarriers_bad) {
  compiler::CompileOptions co;
  co.batch = 4;
  co.persistent_grads = true;
  const compiler::CompiledProgram step =
      compiler::compile(graph::zoo_spec("mlp"), chip_test::tpu_v2_like(), co);
  compiler::AllReduceOptions o;
  o.processors = 2;
  o.shard = 4;
  o.global_batch = 8;
  o.bucket_words = kMlpBucket;
  EXPECT_EQ(
      testing::error_of([&] { compiler::data_parallel_step(step, chip_test::tpu_v2_like(), o); }),
      "data-parallel: bucketed all-reduce: the step was not compiled with kernel_barriers");
}

}  // namespace
}  // namespace tessera::runtime
