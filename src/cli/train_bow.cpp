#include "cli/train_bow.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_output.h"
#include "common/error.h"
#include "report/format.h"
#include "runtime/bow_chip.h"
#include "runtime/bow_train.h"
#include "runtime/checkpoint.h"
#include "runtime/run_config.h"

namespace tessera::cli {

namespace {

nlohmann::ordered_json figures_json(const runtime::BowChipFigures& f, double clock_hz) {
  return {{"steps", f.steps},
          {"cycles", f.cycles},
          {"cycles_per_step", f.per_step(f.cycles)},
          {"sim_seconds", static_cast<double>(f.cycles) / clock_hz},
          {"tensor_core_cycles", f.tensor_cycles},
          {"sparse_core",
           {{"busy_cycles", f.sparse_busy},
            {"busy_cycles_per_step", f.per_step(f.sparse_busy)},
            {"wait_cycles", f.sparse_wait},
            {"overlap_cycles", f.overlap},
            {"overlap_share", f.overlap_share()},
            {"hbm_row_reads", f.row_reads},
            {"hbm_row_writes", f.row_writes},
            {"hbm_row_bytes", f.row_bytes},
            {"hbm_read_bytes", f.sparse_hbm_read_bytes},
            {"hbm_write_bytes", f.sparse_hbm_write_bytes},
            {"vmem_handoff_bytes", f.vmem_handoff_bytes},
            {"vmem_handoff_steps", f.vmem_steps},
            {"hbm_handoff_steps", f.steps - f.vmem_steps}}},
          {"host_link_bytes", f.host_link_bytes},
          {"host_link_seconds", f.host_link_seconds}};
}

}  // namespace

// UsageError for checkpoint flags that do not go together, or with the host executor.
void check_checkpoint_flags(const BowFlags& f) {
  const bool any = !f.checkpoint_dir.empty() || f.checkpoint_every != 0 || f.resume;
  if (any && f.executor == "host-f32")
    throw UsageError("--checkpoint-dir",
                     "bow checkpoints are the chip trainer's (--executor chip)");
  if (f.checkpoint_every < 0) throw UsageError("--checkpoint-every", "must be >= 0");
  if (f.checkpoint_keep < 1) throw UsageError("--checkpoint-keep", "must be >= 1");
  if (f.checkpoint_every > 0 && f.checkpoint_dir.empty())
    throw UsageError("--checkpoint-every", "needs --checkpoint-dir");
  if (f.resume && f.checkpoint_dir.empty()) throw UsageError("--resume", "needs --checkpoint-dir");
}

void run_train_bow(const BowFlags& f) {
  if (!f.dataset.empty() && f.dataset != "fortunes-topics")
    throw UsageError("--dataset", "'" + f.dataset + "': --model bow trains on fortunes-topics");
  if (f.executor != "chip" && f.executor != "host-f32")
    throw UsageError("--executor", "'" + f.executor + "': expected chip or host-f32");
  if (f.chips >= 0)
    throw UsageError("--chips",
                     "--model bow trains on one processor (tables sharded over chips "
                     "train with --model dlrm)");
  if (!(f.host_gbps > 0)) throw UsageError("train", "--host-gbps must be positive");
  check_checkpoint_flags(f);
  runtime::BowRecipe r;
  r.epochs = f.epochs.value_or(r.epochs);
  r.batch = f.batch.value_or(r.batch);
  r.lr = f.lr.value_or(r.lr);
  r.steps = f.steps.value_or(0);
  r.seed = f.seed;
  if (r.epochs < 1 || r.batch < 1 || !(r.lr > 0) || r.steps < 0)
    throw UsageError("train", "--epochs, --batch and --lr must be positive, --steps >= 0");
  const bool chip = f.executor == "chip";
  std::optional<runtime::RunConfig> config;
  if (chip) config = runtime::load_run_config(f.config, f.overrides);
  std::optional<OutputFile> report;
  if (!f.report.empty()) report.emplace(f.report, "report");

  const auto start = std::chrono::steady_clock::now();
  const runtime::TopicCorpus data =
      runtime::load_fortune_topics(f.data_dir.empty() ? runtime::kFortunesDir : f.data_dir);
  std::printf("fortunes-topics: %zu classes, %zu training and %zu test samples\n",
              data.classes.size(), data.train.size(), data.test.size());
  std::fflush(stdout);
  r.model.classes = static_cast<int>(data.classes.size());
  std::unique_ptr<runtime::BowTrainer> trainer;
  runtime::BowChipTrainer* on_chip = nullptr;
  if (chip) {
    runtime::BowChipOptions o;
    o.max_bag = runtime::longest_bag(data);
    o.host_bytes_per_second = f.host_gbps * 1e9;
    try {
      auto t = std::make_unique<runtime::BowChipTrainer>(r, config->spec, o);
      on_chip = t.get();
      trainer = std::move(t);
    } catch (const Error& e) {
      throw UsageError("--config", std::string("the bow step does not fit this chip: ") + e.what());
    }
  } else {
    trainer = std::make_unique<runtime::BowHostTrainer>(r, graph::Numerics::kF32);
  }
  // The identity names the data's classes: known once the corpus is read.
  const nlohmann::ordered_json id =
      chip ? runtime::bow_identity(r, f.config.empty() ? "built-in defaults" : f.config,
                                   config->hash)
           : nlohmann::ordered_json{};
  runtime::BowPosition from;
  std::string resumed_from;
  if (f.resume) {
    const runtime::Checkpoint c = runtime::read_newest_checkpoint(f.checkpoint_dir, &resumed_from);
    runtime::check_identity(resumed_from, c.identity, id);
    on_chip->restore(c);
    from = runtime::bow_position(c.progress.value("loop", nlohmann::ordered_json::object()));
    std::fprintf(stderr, "resumed from %s\n", resumed_from.c_str());
  } else if (!f.checkpoint_dir.empty()) {
    runtime::refuse_existing_checkpoints(f.checkpoint_dir);
    runtime::prepare_checkpoint_dir(f.checkpoint_dir);
  }
  runtime::BowAfterStep after_step;
  if (!f.checkpoint_dir.empty())
    after_step = [&](const runtime::BowPosition& at, bool epoch_end) {
      const int64_t step = on_chip->steps();
      if (epoch_end || (f.checkpoint_every > 0 && step % f.checkpoint_every == 0)) {
        runtime::Checkpoint c = on_chip->checkpoint();
        c.identity = id;
        c.progress["loop"] = runtime::bow_position_json(at);
        runtime::save_checkpoint(f.checkpoint_dir, step, c, f.checkpoint_keep);
      }
      return true;
    };
  const char* where = chip ? "chip" : "host reference";
  const std::vector<runtime::BowEpoch> epochs = runtime::train_bow(
      data, r, *trainer,
      [where](const runtime::BowEpoch& e) {
        std::printf("epoch %d: loss %.4f  test acc %.2f%%  %s  host %.1f s\n", e.epoch, e.loss,
                    100 * e.test_accuracy, where, e.host_seconds);
        std::fflush(stdout);
      },
      from, after_step);
  const std::chrono::duration<double> host = std::chrono::steady_clock::now() - start;
  if (on_chip) {
    const runtime::BowChipFigures& fig = on_chip->figures();
    std::printf(
        "chip: %.0f cycles per step; sparse core busy %.0f cycles per step, %.1f%% of it "
        "overlapped with the tensor core\n",
        fig.per_step(fig.cycles), fig.per_step(fig.sparse_busy), 100.0 * fig.overlap_share());
  }
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
  j["test_accuracy"] = epochs.empty() ? 0.0 : epochs.back().test_accuracy;
  if (!resumed_from.empty()) j["resumed_from"] = resumed_from;
  if (on_chip) {
    j["config"] = f.config.empty() ? "built-in defaults" : f.config;
    j["config_hash"] = config->hash;
    j["vmem_handoff_bytes"] = config->spec.sparse.vmem_handoff_bytes;
    j["chip"] = figures_json(on_chip->figures(), config->spec.clock_hz);
    j["host_seconds"] = host.count();
  }
  write_json(*report, report::tagged("train", j));
}

}  // namespace tessera::cli
