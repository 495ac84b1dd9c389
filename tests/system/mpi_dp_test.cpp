// Data-parallel training (runtime/data_parallel.h) with its processors spread over R ranks
// (DataParallelOptions::comm; ranks as threads, mpi_thread_communicator.h): losses, every
// processor's weights, the running averages of a model with batch normalisation, the step totals
// and the system statistics equal the one-rank run, also with 2 or 3 host threads per rank
// (DataParallelOptions::threads); a checkpoint written on 3 ranks resumes on 2 ranks and on 1 to
// the uninterrupted run's end.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/chip_test_data.h"
#include "runtime/data_parallel.h"
#include "runtime/data_parallel_run.h"
#include "runtime/resnet_train_model.h"
#include "support/temp_dir.h"
#include "system/mpi_thread_communicator.h"

namespace tessera::system {
namespace {

struct Run {
  std::vector<double> losses;
  std::vector<std::vector<std::vector<float>>> params;  // per processor
  std::vector<std::vector<float>> model_state;          // batch normalisation's running averages
  std::vector<int> diverged;
  int64_t wall_ps = 0, compute_ps = 0, exchange_ps = 0, packets = 0;
  std::string system;
};

// The zoo's mlp, or with `batch_norm` a ResNet-18 of stem width 4 on the same 28 x 28 samples.
runtime::TrainModel model_of(bool batch_norm) {
  if (!batch_norm) return graph::zoo_spec("mlp");
  return runtime::resnet_train_model(
      {.depth = 18, .classes = 10, .image = 32, .width = 4, .channels = 1, .input = 28}, 0);
}

Run train_on(Communicator& comm, graph::OptimizerKind kind, int64_t bucket_words = 0,
             int threads = 1, bool batch_norm = false) {
  runtime::DataParallelOptions o;
  o.trainer.batch = 7;  // ragged shards over 4 processors
  o.trainer.optimizer.kind = kind;
  o.trainer.optimizer.lr = kind == graph::OptimizerKind::kSgd ? 0.05 : 1e-3;
  o.system.chips = 2;
  o.system.chips_per_board = 2;
  o.system.cores_per_chip = 2;
  o.system.topology = Topology::kLine;
  o.system.loss_rate = 0.05;
  o.check_replicas = true;
  o.comm = &comm;
  o.bucket_words = bucket_words;
  o.threads = threads;
  runtime::DataParallelTrainer t(model_of(batch_norm), runtime::chip_test::tpu_v2_like(), o);
  Run r;
  for (int s = 0; s < 2; ++s) {
    std::vector<float> images;
    std::vector<int32_t> labels;
    runtime::chip_test::synthetic_samples(7, 300 + static_cast<uint64_t>(s), images, labels);
    r.losses.push_back(t.step(images.data(), labels.data(), 7));
  }
  for (int p = 0; p < t.processors(); ++p) r.params.push_back(t.params(p));
  r.model_state = t.model_state();
  r.diverged = t.diverged_replicas();
  r.wall_ps = t.totals().wall_ps;
  r.compute_ps = t.totals().compute_ps;
  r.exchange_ps = t.totals().exchange_ps;
  r.packets = static_cast<int64_t>(t.totals().packets);
  r.system = t.system_json().dump();
  return r;
}

// Every rank count of `rank_counts` with `threads` host threads per rank against one rank, one
// thread.
void expect_same_for_ranks(graph::OptimizerKind kind, int64_t bucket_words = 0,
                           std::vector<int> rank_counts = {2, 3}, int threads = 1,
                           bool batch_norm = false) {
  const std::vector<Run> one = on_thread_ranks<Run>(
      1, [&](Communicator& c) { return train_on(c, kind, bucket_words, 1, batch_norm); });
  EXPECT_TRUE(one[0].diverged.empty());
  for (int ranks : rank_counts) {
    const std::vector<Run> got = on_thread_ranks<Run>(ranks, [&](Communicator& c) {
      return train_on(c, kind, bucket_words, threads, batch_norm);
    });
    for (int r = 0; r < ranks; ++r) {
      const Run& g = got[static_cast<size_t>(r)];
      EXPECT_EQ(g.losses, one[0].losses)
          << ranks << " ranks, rank " << r << ", " << threads << " threads";
      EXPECT_EQ(g.params.size(), one[0].params.size());
      for (size_t p = 0; p < g.params.size() && p < one[0].params.size(); ++p)
        EXPECT_EQ(runtime::chip_test::differing_words(g.params[p], one[0].params[p]), 0u)
            << "processor " << p;
      EXPECT_EQ(g.model_state, one[0].model_state);
      EXPECT_TRUE(g.diverged.empty());
      EXPECT_EQ(g.wall_ps, one[0].wall_ps);
      EXPECT_EQ(g.compute_ps, one[0].compute_ps);
      EXPECT_EQ(g.exchange_ps, one[0].exchange_ps);
      EXPECT_EQ(g.packets, one[0].packets);
      EXPECT_EQ(g.system, one[0].system);
    }
  }
}

TEST(DataParallelRanks, SgdStepsAreBitIdenticalForOneTwoAndThreeRanks) {
  expect_same_for_ranks(graph::OptimizerKind::kSgd);
}

// The overlapped gradient buckets (runtime/data_parallel.h bucket_words; two buckets, the first
// all-reduced during the backward pass) under 5% loss with ragged shards.
TEST(DataParallelRanks, OverlappedBucketStepsAreBitIdenticalForOneTwoAndFourRanks) {
  expect_same_for_ranks(graph::OptimizerKind::kAdam, 40000, {2, 4});
}

// Host threads per rank (system/system.h "Host threads"), under 5% loss with ragged shards.
TEST(DataParallelRanks, AdamStepsAreBitIdenticalForTwoAndThreeThreadsOnOneAndTwoRanks) {
  for (int threads : {2, 3}) expect_same_for_ranks(graph::OptimizerKind::kAdam, 0, {1, 2}, threads);
}

// Batch normalisation: every replica normalises its own shard (one of them a single sample) and
// the running averages are all-reduced after the gradients, in overlapped buckets here.
TEST(DataParallelRanks, BatchNormStepsAreBitIdenticalForOneTwoAndThreeRanksAndTwoThreads) {
  expect_same_for_ranks(graph::OptimizerKind::kSgd, 4096, {2, 3}, 2, true);
}

TEST(DataParallelRanks, AdamOnTheUnitStepsAreBitIdenticalForOneTwoAndThreeRanks) {
  expect_same_for_ranks(graph::OptimizerKind::kAdam);
}

// Evaluation (DataParallelTrainer::evaluate) after two steps: five batches, the last ragged, over
// R = 1..3 ranks x T = 1..3 threads give the scores of one core evaluating them one after another
// with processor 0's weights (ChipTrainer::evaluate), bit for bit.
TEST(DataParallelRanks, EvaluationOverRanksAndThreadsEqualsOneCoreBatchAfterBatch) {
  std::vector<runtime::Batch> batches(5);
  for (size_t i = 0; i < batches.size(); ++i) {
    runtime::Batch& b = batches[i];
    b.size = i + 1 < batches.size() ? 7 : 3;
    runtime::chip_test::synthetic_samples(b.size, 500 + i, b.images, b.labels);
  }
  using Scores = std::pair<graph::EvalResult, std::vector<std::vector<float>>>;  // and weights
  auto evaluate_on = [&](Communicator& comm, int threads) {
    runtime::DataParallelOptions o;
    o.trainer.batch = 7;
    o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
    o.trainer.optimizer.lr = 1e-3;
    o.system.chips = 2;
    o.system.chips_per_board = 2;
    o.system.cores_per_chip = 2;
    o.system.topology = Topology::kLine;
    o.comm = &comm;
    o.threads = threads;
    runtime::DataParallelTrainer t(graph::zoo_spec("mlp"), runtime::chip_test::tpu_v2_like(), o);
    for (int s = 0; s < 2; ++s)
      t.step(batches[static_cast<size_t>(s)].images.data(),
             batches[static_cast<size_t>(s)].labels.data(), 7);
    Scores r;
    t.evaluate(batches, r.first);
    r.second = t.params(0);
    return r;
  };
  const Scores one =
      on_thread_ranks<Scores>(1, [&](Communicator& c) { return evaluate_on(c, 1); })[0];
  runtime::ChipTrainerOptions co;
  co.batch = 7;
  co.optimizer.kind = graph::OptimizerKind::kAdam;
  runtime::ChipTrainer chip(graph::zoo_spec("mlp"), runtime::chip_test::tpu_v2_like(), co);
  chip.set_params(one.second);
  graph::EvalResult want;
  for (const runtime::Batch& b : batches)
    chip.evaluate(b.images.data(), b.labels.data(), b.size, want);
  EXPECT_EQ(want.samples, 31);
  for (int ranks : {1, 2, 3})
    for (int threads : {1, 2, 3})
      for (const Scores& got : on_thread_ranks<Scores>(
               ranks, [&](Communicator& c) { return evaluate_on(c, threads); })) {
        EXPECT_EQ(got.first.loss_sum, want.loss_sum)
            << ranks << " ranks, " << threads << " threads";
        EXPECT_EQ(got.first.correct, want.correct) << ranks << " ranks, " << threads << " threads";
        EXPECT_EQ(got.first.predictions, want.predictions);
        EXPECT_EQ(got.first.samples, want.samples);
      }
}

struct Finished {
  std::vector<std::vector<std::vector<float>>> params;  // per processor
  std::string report;                                   // without host_seconds and resumed_from
};

const runtime::Dataset& ranks_train() {
  static const runtime::Dataset d =
      runtime::chip_test::synthetic_dataset("synthetic", 20, 1);  // batch 7: 3 steps
  return d;
}

const runtime::Dataset& ranks_test() {
  static const runtime::Dataset d = runtime::chip_test::synthetic_dataset("synthetic-test", 8, 2);
  return d;
}

// Two epochs of Adam on the unit over 2 chips x 2 cores with 5% link loss; checkpoints in `dir`
// every 2 steps; stops after global step `stop` (0: never); resumes when `resume`.
Finished run_on_ranks(Communicator& comm, const std::string& dir, int64_t stop, bool resume) {
  runtime::DataParallelRunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config.spec = runtime::chip_test::tpu_v2_like();
  o.dp.trainer.batch = 7;
  o.dp.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.dp.trainer.optimizer.lr = 1e-3;
  o.dp.system.chips = 2;
  o.dp.system.chips_per_board = 2;
  o.dp.system.cores_per_chip = 2;
  o.dp.system.topology = Topology::kLine;
  o.dp.system.loss_rate = 0.05;
  o.dp.check_replicas = true;
  o.dp.comm = &comm;
  o.epochs = 2;
  o.checkpoint_dir = dir;
  o.checkpoint_every = dir.empty() ? 0 : 2;
  o.resume = resume;
  runtime::DataParallelRun r(ranks_train(), ranks_test(), o);
  runtime::TrainingCallbacks cb;
  if (stop > 0) cb.keep_going = [stop](int64_t step) { return step < stop; };
  r.run(cb);
  Finished f;
  for (int p = 0; p < r.trainer().processors(); ++p) f.params.push_back(r.trainer().params(p));
  nlohmann::ordered_json report = r.report();
  report.erase("resumed_from");
  for (auto& e : report["epochs"]) e.erase("host_seconds");
  f.report = report.dump();
  return f;
}

TEST(DataParallelRanks, CheckpointOnThreeRanksResumesBitIdenticallyOnTwoRanksAndOne) {
  const Finished full = on_thread_ranks<Finished>(1, [](Communicator& c) {
                          return run_on_ranks(c, "", 0, false);
                        }).front();
  testing::TempDir dir;
  const std::string first = dir.file("three-ranks");
  on_thread_ranks<Finished>(3, [&](Communicator& c) { return run_on_ranks(c, first, 4, false); });
  for (int ranks : {2, 1}) {
    const std::string copy = dir.file(std::to_string(ranks) + "-ranks");
    std::filesystem::copy(first, copy);  // each resume writes its own later checkpoints
    const std::vector<Finished> got = on_thread_ranks<Finished>(
        ranks, [&](Communicator& c) { return run_on_ranks(c, copy, 0, true); });
    for (int r = 0; r < ranks; ++r) {
      const Finished& g = got[static_cast<size_t>(r)];
      EXPECT_EQ(g.report, full.report) << ranks << " ranks, rank " << r;
      ASSERT_EQ(g.params.size(), full.params.size());
      for (size_t p = 0; p < g.params.size(); ++p)
        EXPECT_EQ(runtime::chip_test::differing_words(g.params[p], full.params[p]), 0u)
            << "processor " << p;
    }
  }
}

}  // namespace
}  // namespace tessera::system
