#include "cli/train_bow.h"

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_output.h"
#include "common/error.h"
#include "report/format.h"
#include "runtime/bow_train.h"

namespace tessera::cli {

void run_train_bow(const BowFlags& f) {
  if (!f.dataset.empty() && f.dataset != "fortunes-topics")
    throw UsageError("--dataset", "'" + f.dataset + "': --model bow trains on fortunes-topics");
  if (f.executor != "host-f32")
    throw UsageError(
        "--executor",
        "'" + f.executor + "': --model bow runs on the host reference only (--executor host-f32)");
  runtime::BowRecipe r;
  r.epochs = f.epochs.value_or(r.epochs);
  r.batch = f.batch.value_or(r.batch);
  r.lr = f.lr.value_or(r.lr);
  r.steps = f.steps.value_or(0);
  r.seed = f.seed;
  if (r.epochs < 1 || r.batch < 1 || !(r.lr > 0) || r.steps < 0)
    throw UsageError("train", "--epochs, --batch and --lr must be positive, --steps >= 0");
  std::optional<OutputFile> report;
  if (!f.report.empty()) report.emplace(f.report, "report");
  const runtime::TopicCorpus data =
      runtime::load_fortune_topics(f.data_dir.empty() ? runtime::kFortunesDir : f.data_dir);
  std::printf("fortunes-topics: %zu classes, %zu training and %zu test samples\n",
              data.classes.size(), data.train.size(), data.test.size());
  std::fflush(stdout);
  const std::vector<runtime::BowEpoch> epochs =
      runtime::train_bow_host(data, r, graph::Numerics::kF32, [](const runtime::BowEpoch& e) {
        std::printf("epoch %d: loss %.4f  test acc %.2f%%  host reference  host %.1f s\n", e.epoch,
                    e.loss, 100 * e.test_accuracy, e.host_seconds);
        std::fflush(stdout);
      });
  if (!report) return;
  nlohmann::ordered_json j;
  j["model"] = "bow";
  j["dataset"] = "fortunes-topics";
  j["executor"] = f.executor;
  j["recipe"] = {{"rows", r.model.rows},   {"dim", r.model.dim}, {"table_std", r.model.table_std},
                 {"optimizer", "adagrad"}, {"lr", r.lr},         {"eps", r.eps},
                 {"batch", r.batch},       {"epochs", r.epochs}, {"seed", r.seed}};
  j["classes"] = data.classes;
  j["train_samples"] = data.train.size();
  j["test_samples"] = data.test.size();
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const runtime::BowEpoch& e : epochs)
    list.push_back({{"epoch", e.epoch},
                    {"steps", e.steps},
                    {"loss", e.loss},
                    {"test_accuracy", e.test_accuracy},
                    {"host_seconds", e.host_seconds}});
  j["epochs"] = list;
  j["test_accuracy"] = epochs.back().test_accuracy;
  write_json(*report, report::tagged("train", j));
}

}  // namespace tessera::cli
