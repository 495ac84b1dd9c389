// The gpt decoder trained data-parallel (runtime/data_parallel_run.h) on byte windows of a text
// (a tiny model: d 32, 2 heads, 1 block, context 16, Adam on the Adam unit). On one processor it is
// bit-identical to the host reference in chip numerics (every step's loss, the validation loss,
// every weight, all optimizer state). On 4 processors (2 chips x 2 cores) every replica holds the
// same weights after every step and the losses follow the single-chip run of the same global
// batch (only the order of the gradient summation differs), ragged shards too, and so do the
// validation losses; the report has the data-parallel figures, tokens per simulated second and the
// MXU split. An interrupted and resumed run equals the
// uninterrupted one bit for bit; the bucketed all-reduce overlapped with the backward pass changes
// only time; a batch smaller than the machine, or a checkpoint of another gpt, is refused.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "gpt_test_data.h"
#include "runtime/data_parallel_run.h"
#include "runtime/host_run.h"
#include "runtime/training_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using gpt_test::data;
using tessera::testing::TempDir;

// The single-chip run's options (the loop's and the trainer's).
TrainingRunOptions chip_options(int batch, int64_t steps) {
  return gpt_test::options(batch, steps);
}

DataParallelRunOptions dp_options(int chips, int cores, int batch, int64_t steps) {
  DataParallelRunOptions o;
  static_cast<RunOptions&>(o) = chip_options(batch, steps);
  o.dp.trainer = chip_options(batch, steps).trainer;
  o.dp.system = chip_test::machine(chips, cores, 0);
  o.dp.fabric_seed = 5;
  o.dp.check_replicas = true;
  return o;
}

std::vector<double> step_losses(const nlohmann::ordered_json& epoch) {
  std::vector<double> out;
  for (const auto& l : epoch["per_step"]["loss"]) out.push_back(l.get<double>());
  return out;
}

TEST(DataParallelGpt, OneProcessorIsBitIdenticalToTheHostChipNumerics) {
  const DataParallelRunOptions o = dp_options(1, 1, 4, 6);
  DataParallelRun dp(data().train, data().test, o);
  ASSERT_TRUE(dp.run());
  HostRunOptions h;
  static_cast<RunOptions&>(h) = o;
  h.trainer = o.dp.trainer;
  h.numerics = graph::Numerics::kChip;
  h.use_blas = false;
  HostRun host(data().train, data().test, h);
  ASSERT_TRUE(host.run());

  const nlohmann::ordered_json d = dp.report()["epochs"][0], r = host.report()["epochs"][0];
  const std::vector<double> ld = step_losses(d), lh = step_losses(r);
  ASSERT_EQ(ld.size(), 6u);
  ASSERT_EQ(lh.size(), 6u);
  for (size_t s = 0; s < 6; ++s)
    EXPECT_TRUE(gpt_test::same_bits(static_cast<float>(ld[s]), static_cast<float>(lh[s])))
        << "step " << s << ": data-parallel " << ld[s] << " host " << lh[s];
  EXPECT_EQ(d["test_loss"], r["test_loss"]);
  EXPECT_EQ(d["test_accuracy"], r["test_accuracy"]);

  const auto& host_trainer = static_cast<const HostRunTrainer&>(host.RunLoop::trainer());
  const auto [params, state] = dp.trainer().replica_state();
  EXPECT_EQ(chip_test::differing_words(params, host_trainer.parameters()), 0u);
  EXPECT_EQ(chip_test::differing_words(state, host_trainer.optimizer_state()), 0u);
}

// `steps` steps of a global batch `batch` on 2 chips x 2 cores and on one chip: replicas identical
// (check_replicas), losses within `tolerance` (relative) of the single chip's.
void four_processors_follow_the_single_chip(int batch, int64_t steps, double tolerance) {
  DataParallelRunOptions o = dp_options(2, 2, batch, steps);
  o.eval_every = 1;
  DataParallelRun dp(data().train, data().test, o);
  ASSERT_TRUE(dp.run());
  TrainingRunOptions c1 = chip_options(batch, steps);
  c1.eval_every = 1;
  TrainingRun chip(data().train, data().test, c1);
  ASSERT_TRUE(chip.run());

  const nlohmann::ordered_json d = dp.report()["epochs"][0], c = chip.report()["epochs"][0];
  const std::vector<double> ld = step_losses(d), lc = step_losses(c);
  ASSERT_EQ(ld.size(), static_cast<size_t>(steps));
  ASSERT_EQ(lc.size(), static_cast<size_t>(steps));
  for (size_t s = 0; s < ld.size(); ++s)
    EXPECT_NEAR(ld[s], lc[s], tolerance * lc[s]) << "step " << s;
  EXPECT_NEAR(d["test_loss"].get<double>(), c["test_loss"].get<double>(),
              tolerance * c["test_loss"].get<double>());
  // Validation after every step but the last (the epoch's own evaluation follows it).
  ASSERT_EQ(d["evals"].size(), static_cast<size_t>(steps - 1));
  ASSERT_EQ(c["evals"].size(), static_cast<size_t>(steps - 1));
  for (size_t s = 0; s < d["evals"].size(); ++s) {
    EXPECT_EQ(d["evals"][s]["step"], c["evals"][s]["step"]);
    const double want = c["evals"][s]["test_loss"].get<double>();
    EXPECT_NEAR(d["evals"][s]["test_loss"].get<double>(), want, tolerance * want) << "eval " << s;
  }
  EXPECT_TRUE(dp.trainer().diverged_replicas().empty());

  EXPECT_EQ(d["processors"], 4);
  EXPECT_EQ(d["samples"], batch * steps);
  EXPECT_GT(d["exchange_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(d["exchange_share"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(d["tokens_per_sim_second"].get<double>(),
                   d["samples_per_sim_second"].get<double>() * gpt_test::kTiny.context);
  EXPECT_EQ(d["per_step"]["supersteps"].size(), static_cast<size_t>(steps));
  // One processor's step split by layer kind (the single-core baseline step).
  EXPECT_GT(d["mxu_split"]["attention"]["busy_cycles"].get<int64_t>(), 0);
  EXPECT_GT(d["mxu_split"]["dense"]["busy_cycles"].get<int64_t>(), 0);
}

TEST(DataParallelGpt, FourProcessorsKeepReplicasIdenticalAndFollowTheSingleChip) {
  // Tolerance: the per-window gradient terms are the same; only the fp32 summation order of the
  // batch reduction differs (shard sums, then the all-reduce's order), so the losses agree to
  // ~1e-6 relative; Adam at lr 1e-2 moves words whose gradient is at the level of that difference
  // by up to 2 lr (measured: 3e-6 relative over 4 steps); 1e-4 leaves room.
  four_processors_follow_the_single_chip(8, 4, 1e-4);
}

TEST(DataParallelGpt, RaggedShardsKeepReplicasIdenticalAndFollowTheSingleChip) {
  // 6 windows over 4 processors: shards 2, 2, 1, 1 (two images); the mean over the 6 windows.
  four_processors_follow_the_single_chip(6, 3, 1e-4);
}

// Every processor's parameters, as one string of their bits.
std::string params_of(const DataParallelRun& r) {
  nlohmann::ordered_json j;
  for (int p = 0; p < r.trainer().processors(); ++p) j.push_back(r.trainer().params(p));
  return j.dump();
}

// Every processor's parameters, the optimizer state, the step count and the report without wall
// time.
std::string outcome_of(const DataParallelRun& r) {
  nlohmann::ordered_json j = r.report();
  j.erase("resumed_from");
  for (auto& e : j["epochs"]) e.erase("host_seconds");
  j["params"] = params_of(r);
  j["state"] = r.trainer().replica_state().second;
  j["steps"] = r.trainer().steps();
  return j.dump();
}

TEST(DataParallelGpt, ResumedRunEqualsTheUninterruptedRun) {
  DataParallelRun full(data().train, data().test, dp_options(2, 2, 8, 5));
  ASSERT_TRUE(full.run());

  TempDir dir;
  DataParallelRunOptions o = dp_options(2, 2, 8, 5);
  o.checkpoint_dir = dir.str();
  o.checkpoint_every = 2;
  const std::unique_ptr<DataParallelRun> second =
      gpt_test::interrupted_and_resumed<DataParallelRun>(o, 3, "ckpt-0000000002.tsck");
  ASSERT_TRUE(second->run());
  EXPECT_EQ(outcome_of(*second), outcome_of(full));
}

TEST(DataParallelGpt, BucketsOverlappedWithTheBackwardPassChangeOnlyTime) {
  // The bucketed all-reduce (buckets of at most 4,000 words) with its supersteps between the
  // backward kernels and all after the backward pass: the same losses and weights bit for bit.
  DataParallelRunOptions o = dp_options(2, 2, 8, 3);
  o.dp.bucket_words = 4000;
  DataParallelRun overlapped(data().train, data().test, o);
  ASSERT_TRUE(overlapped.run());
  o.dp.overlap = false;
  DataParallelRun after(data().train, data().test, o);
  ASSERT_TRUE(after.run());
  const nlohmann::ordered_json a = overlapped.report()["epochs"][0],
                               b = after.report()["epochs"][0];
  EXPECT_EQ(a["per_step"]["loss"], b["per_step"]["loss"]);
  EXPECT_EQ(a["test_loss"], b["test_loss"]);
  EXPECT_EQ(params_of(overlapped), params_of(after));
  EXPECT_GT(overlapped.trainer().first_image().overlapped_supersteps, 0);
  EXPECT_GT(overlapped.trainer().first_image().buckets, 1);
}

TEST(DataParallelGpt, FewerWindowsThanProcessors_bad) {
  EXPECT_EQ(tessera::testing::error_of(
                [&] { DataParallelRun r(data().train, data().test, dp_options(2, 2, 3, 1)); }),
            "train: batch 3 has fewer samples than the 4 processors (2 chips x 2 cores)");
}

}  // namespace
}  // namespace tessera::runtime
