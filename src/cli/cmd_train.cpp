// `tessera train --model mlp --dataset fashion-mnist [--epochs N] [--batch B] [--optimizer adam|sgd]
//  [--lr X] [--seed S] [--config C] [--report r.json] [--data-dir D] [--steps N] [--host-gbps G]`:
// trains on the simulated chip (runtime::ChipTrainer: the compiled step on the timed core) and
// evaluates on the test set with the compiled inference program. Per epoch: loss, train and test
// accuracy, simulated cycles and seconds (chip + host link), samples per simulated second, MXU and
// vector-unit utilisation, energy, host wall time. --steps limits the steps per epoch (and the
// test samples to steps * batch), for quick runs. --report writes all of it as JSON, per epoch, plus
// the resolved config. --checkpoint-dir D [--checkpoint-every N] [--checkpoint-keep K] and --resume:
// runtime/training_run.h (the loop, checkpoints, resume) and runtime/checkpoint.h (the file format).
// --adam-on unit|vector-unit: Adam on the Adam optimizer unit (default) or on the vector unit; the
// epoch report's "optimizer" object: its cycles, HBM bytes and energy (runtime/optimizer_cost.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/cmd_train_dp.h"
#include "cli/commands.h"
#include "common/error.h"
#include "graph/model.h"
#include "runtime/dataset.h"
#include "runtime/run_config.h"
#include "runtime/training_run.h"

namespace tessera::cli {

namespace {

struct TrainArgs {
  std::string model = "mlp", dataset = "fashion-mnist", optimizer = "adam", config, report, data_dir, checkpoint_dir;
  int epochs = 3, batch = 128, checkpoint_keep = 2;
  int64_t checkpoint_every = 0;
  bool resume = false;
  double lr = 1e-3, host_gbps = 16;
  std::string adam_on = "unit";
  uint64_t seed = 0;
  int64_t steps = 0;
  int chips = -1, cores_per_chip = 0;  // --chips given (>= 0): data-parallel on the system
};

void run_train(const TrainArgs& a) {
  if (a.dataset != "fashion-mnist") throw Error("train", "unknown dataset '" + a.dataset + "' (known: fashion-mnist)");
  if (a.epochs < 1) throw Error("train", "--epochs must be >= 1");
  if (a.batch < 1) throw Error("train", "--batch must be >= 1");
  if (!(a.lr > 0)) throw Error("train", "--lr must be positive");
  runtime::TrainingRunOptions o;
  o.model_name = a.model;
  o.model = graph::zoo_spec(a.model);
  o.config = runtime::load_run_config(a.config);
  o.trainer.batch = a.batch;
  o.trainer.optimizer.kind = graph::optimizer_from_name(a.optimizer);
  o.trainer.optimizer.lr = a.lr;
  o.trainer.seed = a.seed;
  o.trainer.host_bytes_per_second = a.host_gbps * 1e9;
  if (a.adam_on != "unit" && a.adam_on != "vector-unit")
    throw Error("train", "unknown --adam-on '" + a.adam_on + "' (known: unit, vector-unit)");
  o.trainer.adam_on = a.adam_on == "unit" ? compiler::AdamOn::kUnit : compiler::AdamOn::kVectorUnit;
  o.epochs = a.epochs;
  o.steps_limit = a.steps;
  o.checkpoint_dir = a.checkpoint_dir;
  o.checkpoint_every = a.checkpoint_every;
  o.checkpoint_keep = a.checkpoint_keep;
  o.resume = a.resume;
  const std::string dir = a.data_dir.empty() ? runtime::kFashionMnistDir : a.data_dir;
  const runtime::Dataset train = runtime::load_fashion_mnist(dir, runtime::Split::kTrain);
  runtime::Dataset test = runtime::load_fashion_mnist(dir, runtime::Split::kTest);
  if (a.steps > 0) test = runtime::take(test, std::min<int64_t>(test.count, a.steps * a.batch));
  if (a.chips != -1) {
    run_train_data_parallel(train, test, o, a.config, a.chips, a.cores_per_chip, a.report);
    return;
  }
  runtime::TrainingRun run(train, test, o);
  if (!run.resumed_from().empty()) std::fprintf(stderr, "resumed from %s\n", run.resumed_from().c_str());
  runtime::TrainingCallbacks cb;
  cb.progress = [](int epoch, int64_t steps, int64_t total, double loss) {
    if (steps % 10 != 0 && steps != total) return;
    std::fprintf(stderr, "\repoch %d [%-30s] %lld/%lld loss %.4f", epoch + 1,
                 std::string(static_cast<size_t>(30 * steps / total), '#').c_str(), static_cast<long long>(steps),
                 static_cast<long long>(total), loss);
    if (steps == total) std::fprintf(stderr, "\n");
  };
  cb.epoch_done = [](const nlohmann::ordered_json& j) {
    std::printf(
        "epoch %d: loss %.4f  train acc %.2f%%  test acc %.2f%%  sim %lld cycles = %.4f s (+ host link %.4f s)  "
        "%.0f samples/sim-s  MXU %.1f%%  vector %.1f%%  energy %.3f J  host %.1f s\n",
        j["epoch"].get<int>(), j["loss"].get<double>(), 100 * j["train_accuracy"].get<double>(),
        100 * j["test_accuracy"].get<double>(), static_cast<long long>(j["sim_cycles"].get<int64_t>()),
        j["sim_chip_seconds"].get<double>(), j["sim_host_link_seconds"].get<double>(),
        j["samples_per_sim_second"].get<double>(), 100 * j["mxu_utilization"].get<double>(),
        100 * j["vector_utilization"].get<double>(), j["energy_j"].get<double>(), j["host_seconds"].get<double>());
    if (j.contains("optimizer")) {
      const nlohmann::ordered_json& o = j["optimizer"];
      std::printf("  optimizer: %.0f cycles/step (%.1f%% of the step)  %.0f HBM bytes/step  %.1f uJ/step\n",
                  o["cycles_per_step"].get<double>(), 100 * o["cycle_share"].get<double>(),
                  o["hbm_bytes_per_step"].get<double>(), o["energy_uj_per_step"].get<double>());
    }
    std::fflush(stdout);
  };
  run.run(cb);
  if (!a.report.empty()) {
    std::ofstream out(a.report);
    if (!out) throw Error(a.report, "cannot open for writing");
    out << run.report().dump(2) << "\n";
    if (!out) throw Error(a.report, "write failed");
  }
}

}  // namespace

void register_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "train a model on the simulated chip");
  cmd->add_option("--model", args->model, "zoo model (mlp)");
  cmd->add_option("--dataset", args->dataset, "dataset (fashion-mnist)");
  cmd->add_option("--epochs", args->epochs, "epochs");
  cmd->add_option("--batch", args->batch, "batch size");
  cmd->add_option("--optimizer", args->optimizer, "adam or sgd");
  cmd->add_option("--lr", args->lr, "learning rate");
  cmd->add_option("--seed", args->seed, "seed (initialisation and shuffling)");
  cmd->add_option("--config", args->config, "core config file");
  cmd->add_option("--report", args->report, "write the per-epoch report as JSON");
  cmd->add_option("--data-dir", args->data_dir, "Fashion-MNIST directory");
  cmd->add_option("--steps", args->steps, "limit the steps per epoch (and the test set to steps x batch)");
  cmd->add_option("--host-gbps", args->host_gbps, "host link bandwidth into HBM, GB/s");
  cmd->add_option("--adam-on", args->adam_on, "where Adam runs: unit (the Adam optimizer unit, default) or vector-unit");
  cmd->add_option("--checkpoint-dir", args->checkpoint_dir, "write checkpoints here (after every epoch)");
  cmd->add_option("--checkpoint-every", args->checkpoint_every, "also checkpoint every N steps");
  cmd->add_option("--checkpoint-keep", args->checkpoint_keep, "keep the newest N checkpoints (default 2)");
  cmd->add_flag("--resume", args->resume, "continue from the newest checkpoint in --checkpoint-dir");
  cmd->add_option("--chips", args->chips, "train data-parallel on this many chips (cli/cmd_train_dp.h)");
  cmd->add_option("--cores-per-chip", args->cores_per_chip, "with --chips: cores per chip (default: the config's)");
  cmd->callback([args] { run_train(*args); });
}

}  // namespace tessera::cli
