// `tessera train --model mlp --dataset fashion-mnist [--epochs N] [--batch B] [--optimizer adam|sgd]
//  [--lr X] [--seed S] [--config C] [--report r.json] [--data-dir D] [--steps N] [--host-gbps G]`:
// trains on the simulated chip (runtime::ChipTrainer: the compiled step on the timed core) and
// evaluates on the test set with the compiled inference program. Per epoch: loss, train and test
// accuracy, simulated cycles and seconds (chip + host link), samples per simulated second, MXU and
// vector-unit utilisation, energy, host wall time. --steps limits the steps per epoch (and the
// test samples to steps * batch), for quick runs. --report writes all of it as JSON.
// --adam-on unit|vector-unit: Adam on the Adam optimizer unit (default) or on the vector unit; the
// epoch report's "optimizer" object: its cycles, HBM bytes and energy (runtime/optimizer_cost.h).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/error.h"
#include "core/spec.h"
#include "graph/model.h"
#include "runtime/dataset.h"
#include "runtime/train_chip.h"

namespace tessera::cli {

namespace {

struct TrainArgs {
  std::string model = "mlp", dataset = "fashion-mnist", optimizer = "adam", config, report, data_dir;
  std::string adam_on = "unit";
  int epochs = 3, batch = 128;
  double lr = 1e-3, host_gbps = 16;
  uint64_t seed = 0;
  int64_t steps = 0;
};

core::CoreSpec train_spec(const std::string& path) {
  if (!path.empty()) return core::load_core_spec(path);
  ConfigReader r = ConfigReader::from_string("{}", "<built-in defaults>");
  core::CoreSpec s = core::read_core_spec(r);
  r.finish();
  return s;
}

struct Snapshot {
  int64_t cycles = 0, mxu = 0, vec = 0;
  double energy_uj = 0;
};

Snapshot snap(const core::Core& c) {
  Snapshot s;
  s.cycles = c.cycles();
  s.mxu = c.unit_busy_cycles(isa::Unit::Mxu);
  s.vec = c.unit_busy_cycles(isa::Unit::Vector);
  s.energy_uj = c.stats().get("energy.total_uj");
  return s;
}

void run_train(const TrainArgs& a) {
  if (a.dataset != "fashion-mnist") throw Error("train", "unknown dataset '" + a.dataset + "' (known: fashion-mnist)");
  if (a.epochs < 1) throw Error("train", "--epochs must be >= 1");
  if (a.batch < 1) throw Error("train", "--batch must be >= 1");
  if (!(a.lr > 0)) throw Error("train", "--lr must be positive");
  const graph::ModelSpec model = graph::zoo_spec(a.model);
  const core::CoreSpec spec = train_spec(a.config);
  runtime::ChipTrainerOptions o;
  o.batch = a.batch;
  o.optimizer.kind = graph::optimizer_from_name(a.optimizer);
  o.optimizer.lr = a.lr;
  o.seed = a.seed;
  o.host_bytes_per_second = a.host_gbps * 1e9;
  if (a.adam_on != "unit" && a.adam_on != "vector-unit")
    throw Error("train", "unknown --adam-on '" + a.adam_on + "' (known: unit, vector-unit)");
  o.adam_on = a.adam_on == "unit" ? compiler::AdamOn::kUnit : compiler::AdamOn::kVectorUnit;
  const std::string dir = a.data_dir.empty() ? runtime::kFashionMnistDir : a.data_dir;
  const runtime::Dataset train = runtime::load_fashion_mnist(dir, runtime::Split::kTrain);
  runtime::Dataset test = runtime::load_fashion_mnist(dir, runtime::Split::kTest);
  if (a.steps > 0) test = runtime::take(test, std::min<int64_t>(test.count, a.steps * a.batch));
  runtime::ChipTrainer trainer(model, spec, o);
  runtime::Batcher batches(train, a.batch, a.seed, true);
  runtime::Batcher test_batches(test, a.batch, a.seed, false);
  nlohmann::ordered_json report;
  report["model"] = a.model;
  report["optimizer"] = a.optimizer;
  report["batch"] = a.batch;
  report["lr"] = a.lr;
  report["seed"] = a.seed;
  report["config"] = spec.name;
  report["clock_hz"] = spec.clock_hz;
  report["epochs"] = nlohmann::ordered_json::array();
  for (int e = 0; e < a.epochs; ++e) {
    const auto wall0 = std::chrono::steady_clock::now();
    const Snapshot s0 = snap(trainer.core());
    const runtime::OptimizerCost opt0 = trainer.optimizer_cost();
    const double link0 = trainer.host_link_seconds();
    batches.start_epoch(e);
    runtime::Batch b;
    int64_t steps = 0, samples = 0;
    double loss_sum = 0;
    const int64_t total = a.steps > 0 ? std::min(a.steps, batches.batches_per_epoch()) : batches.batches_per_epoch();
    while (steps < total && batches.next(b)) {
      loss_sum += static_cast<double>(trainer.step(b.images.data(), b.labels.data(), b.size)) * b.size;
      samples += b.size;
      ++steps;
      if (steps % 10 == 0 || steps == total)
        std::fprintf(stderr, "\repoch %d [%-30s] %lld/%lld loss %.4f", e + 1,
                     std::string(static_cast<size_t>(30 * steps / total), '#').c_str(), static_cast<long long>(steps),
                     static_cast<long long>(total), loss_sum / static_cast<double>(samples));
    }
    std::fprintf(stderr, "\n");
    const Snapshot s1 = snap(trainer.core());
    const double link = trainer.host_link_seconds() - link0;
    // Train accuracy: the inference program on the chip over the first test-set-sized slice of the
    // training set in file order (the whole training set would cost most of an epoch again).
    graph::EvalResult tr, te;
    {
      runtime::Batcher ev(train, a.batch, a.seed, false);
      ev.start_epoch(0);
      int64_t n = 0;
      while (n < test.count && ev.next(b)) {
        trainer.evaluate(b.images.data(), b.labels.data(), b.size, tr);
        n += b.size;
      }
    }
    test_batches.start_epoch(0);
    while (test_batches.next(b)) trainer.evaluate(b.images.data(), b.labels.data(), b.size, te);
    const int64_t cycles = s1.cycles - s0.cycles;
    const double chip_s = static_cast<double>(cycles) / spec.clock_hz, sim_s = chip_s + link;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    nlohmann::ordered_json j;
    j["epoch"] = e + 1;
    j["steps"] = steps;
    j["samples"] = samples;
    j["loss"] = loss_sum / static_cast<double>(samples);
    j["train_accuracy"] = static_cast<double>(tr.correct) / static_cast<double>(tr.samples);
    j["train_accuracy_samples"] = tr.samples;
    j["test_accuracy"] = static_cast<double>(te.correct) / static_cast<double>(te.samples);
    j["test_loss"] = te.loss_sum / static_cast<double>(te.samples);
    j["sim_cycles"] = cycles;
    j["sim_chip_seconds"] = chip_s;
    j["sim_host_link_seconds"] = link;
    j["sim_seconds"] = sim_s;
    j["samples_per_sim_second"] = static_cast<double>(samples) / sim_s;
    j["mxu_utilization"] = static_cast<double>(s1.mxu - s0.mxu) / static_cast<double>(cycles);
    j["vector_utilization"] = static_cast<double>(s1.vec - s0.vec) / static_cast<double>(cycles);
    j["energy_j"] = (s1.energy_uj - s0.energy_uj) * 1e-6;
    j["host_seconds"] = wall;
    j["optimizer"] = runtime::optimizer_json(trainer.optimizer_cost() - opt0, cycles);
    std::printf(
        "epoch %d: loss %.4f  train acc %.2f%%  test acc %.2f%%  sim %lld cycles = %.4f s (+ host link %.4f s)  "
        "%.0f samples/sim-s  MXU %.1f%%  vector %.1f%%  energy %.3f J  host %.1f s\n",
        e + 1, j["loss"].get<double>(), 100 * j["train_accuracy"].get<double>(),
        100 * j["test_accuracy"].get<double>(), static_cast<long long>(cycles), chip_s, link,
        j["samples_per_sim_second"].get<double>(), 100 * j["mxu_utilization"].get<double>(),
        100 * j["vector_utilization"].get<double>(), j["energy_j"].get<double>(), wall);
    const nlohmann::ordered_json& opt = j["optimizer"];
    std::printf("  optimizer: %.0f cycles/step (%.1f%% of the step)  %.0f HBM bytes/step  %.1f uJ/step\n",
                opt["cycles_per_step"].get<double>(), 100 * opt["cycle_share"].get<double>(),
                opt["hbm_bytes_per_step"].get<double>(), opt["energy_uj_per_step"].get<double>());
    std::fflush(stdout);
    report["epochs"].push_back(j);
  }
  if (!a.report.empty()) {
    std::ofstream out(a.report);
    if (!out) throw Error(a.report, "cannot open for writing");
    out << report.dump(2) << "\n";
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
  cmd->callback([args] { run_train(*args); });
}

}  // namespace tessera::cli
