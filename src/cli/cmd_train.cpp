// `tessera train --model mlp --dataset fashion-mnist [--epochs N] [--batch B] [--optimizer
// adam|sgd] [--lr X] [--seed S] [--config C] [--report r.json] [--data-dir D] [--steps N]
// [--host-gbps G]`: trains on the simulated chip (runtime::ChipTrainer: the compiled step on the
// timed core) and evaluates on the test set with the compiled inference program. Per epoch: loss,
// train and test accuracy, simulated cycles and seconds (chip + host link), samples per simulated
// second, MXU and vector-unit utilisation, energy, host wall time. --steps limits the steps per
// epoch (and the test samples to steps * batch), for quick runs. --report writes all of it as
// JSON, per epoch, plus the resolved config. --checkpoint-dir D [--checkpoint-every N]
// [--checkpoint-keep K] and --resume: runtime/run_loop.h (the loop, checkpoints, resume) and
// runtime/checkpoint.h (the file format).
// --adam-on unit|vector-unit: Adam on the Adam optimizer unit (default) or on the vector unit; the
// epoch report's "optimizer" object: its cycles, HBM bytes and energy (runtime/optimizer_cost.h).
// --pe bit-parallel|term-serial overrides core.mxu.pe ("bf16" is the same as "bit-parallel");
// --vmem-handoff-bytes N overrides core.sparse.vmem_handoff_bytes;
// --set KEY=VALUE (repeatable) overrides any config key (VALUE as JSON, else as a string), e.g.
// --set core.mxu.term.acc_width=12. The epoch report's "pe" object: the MXU's work per phase and
// layer (runtime/pe_attribution.h); with term-serial PEs a per-phase summary is printed. With
// core.hbm.exponent_encoding.on, a line of compression ratios per tensor kind
// (runtime/hbm_report.h).
// --profile-acc-width [--profile-min-width W] [--profile-out C]: instead of one run, the per-layer
// accumulator-width search of runtime/pe_profile.h (term-serial PEs; each trial a run with these
// options); C receives the config with the chosen core.mxu.term.layer_acc_width, --report the
// search ("acc_width_profile": every trial).
// --chips N [--cores-per-chip C] [--config board4.json|pod-torus.json]: data-parallel training on
// the timed multi-processor system (runtime/data_parallel_run.h) with the same options (--batch is
// the global batch); the machine is runtime::data_parallel_machine's. Prints the epoch line plus a
// data-parallel line per epoch; --report and checkpoints as for one chip (the checkpoint holds the
// system and fabric state too). --allreduce auto|ring|torus: the gradient all-reduce
// (runtime::allreduce_for; default auto). --bucket-words W [--no-overlap]: the bucketed gradient
// all-reduce (compiler/data_parallel.h). --threads T: host threads per rank simulating the
// processors (system/system.h "Host threads"; default the host's cores; results do not depend on
// it); the report's "host" object says how they and the ranks spent host time
// (system::System::host_json). Under mpirun rank 0 prints progress and writes the report.
// --model gpt [--d-model D --heads H --layers L --context T] (defaults 128, 4, 2, 64) trains the
// gpt decoder on the fortunes corpus (--dataset fortunes, the default for gpt; --data-dir: the
// corpus directory): every step a batch of windows drawn from the training stream, one epoch of
// --steps steps (--epochs defaults to 1 for gpt), evaluated on the first 256 non-overlapping
// windows of the validation stream (the report's test_loss, in nats per byte) and of the training
// stream; the epoch line adds tokens per simulated second and the MXU split between attention and
// dense layers. --executor host-f32 runs the same training on the host reference executor in fp32
// (runtime/host_run.h): the reference a chip run's losses are compared with.
// --model gpt --embedding-on sparse-core: the token embedding's gather and gradient scatter-add
// on the sparse core (one chip; the same values, other cycles); tensor-core is the default.
// --model gpt --chips N trains it data-parallel: each step's windows are split over the processors
// (runtime/data_parallel_run.h), validation runs on processor 0's weights on one core.
// --model resnet18|resnet50 [--width W] [--image N]: cli/train_resnet.h.
// --model bert [--layers L --d-model D --heads H --context S] (defaults BERT-base: 12, 768, 12,
// 128; vocab 30522) trains the zoo's encoder (runtime/bert_train_model.h) by token classification
// at every position: on --dataset synthetic (its default: random bytes, runtime::synthetic_text,
// --steps batches of windows and one to evaluate) or fortunes (windows of the corpus labelled by
// the next byte, as for gpt). For the cycles of a real-size step: nothing is learned from random
// bytes.
// --model x.onnx --loss softmax-ce:OUTPUT [--label-input NAME] trains an imported ONNX model
// (onnx/onnx_training.h: its initializers are the parameters) on the image dataset; with --chips N
// data-parallel like the zoo models.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <tuple>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "cli/model_flags.h"
#include "cli/train_bow.h"
#include "cli/train_dlrm.h"
#include "cli/train_resnet.h"
#include "common/error.h"
#include "graph/model.h"
#include "htmlreport/page.h"
#include "numerics/term_pe/term_pe.h"
#include "report/format.h"
#include "report/trace.h"
#include "runtime/data_parallel_run.h"
#include "runtime/dataset.h"
#include "runtime/fortunes.h"
#include "runtime/hbm_report.h"
#include "runtime/host_run.h"
#include "runtime/pe_profile.h"
#include "runtime/run_config.h"
#include "runtime/sparse_step_host.h"
#include "runtime/training_run.h"
#include "system/communicator.h"

namespace tessera::cli {

namespace {

struct TrainArgs {
  ModelFlags m;  // --model and its sizes
  std::string dataset, optimizer = "adam", config, report, html, trace, data_dir, checkpoint_dir;
  std::optional<int> epochs;  // default 3, gpt 1
  int batch = 128, checkpoint_keep = 2;
  int64_t checkpoint_every = 0, eval_every = 0;
  bool resume = false;
  double lr = 1e-3, host_gbps = 16;
  std::string adam_on = "unit";
  std::string embedding_on = "tensor-core";  // gpt: or sparse-core
  std::string executor = "chip";             // or host-f32: the host reference (runtime/host_run.h)
  std::string pe;                            // "", "bit-parallel", "bf16", "term-serial"
  std::vector<std::string> sets;             // KEY=VALUE config overrides
  bool profile = false;
  int profile_min_width = numerics::kMinAccFractionBits;
  std::string profile_out;
  uint64_t seed = 0;
  std::optional<int64_t> steps;        // --steps: unset runs whole epochs
  int chips = -1, cores_per_chip = 0;  // --chips given (>= 0): data-parallel on the system
  std::string allreduce;               // --allreduce (with --chips): auto (default) | ring | torus
  int64_t bucket_words = 0;            // --chips: gradient buckets (compiler/data_parallel.h)
  std::optional<int64_t> vmem_handoff_bytes;  // overrides core.sparse.vmem_handoff_bytes
  bool no_overlap = false;
  int threads = cli::default_threads();  // --chips: host threads per rank
  cli::DlrmFlags dlrm;                   // --model dlrm
};

// --embedding-on (UsageError for an unknown value, or sparse-core outside one chip's gpt).
compiler::EmbeddingOn embedding_on(const std::string& v, const std::string& model, bool chips) {
  if (v != "tensor-core" && v != "sparse-core")
    throw UsageError("--embedding-on", "unknown '" + v + "' (known: tensor-core, sparse-core)");
  if (v == "tensor-core") return compiler::EmbeddingOn::kTensorCore;
  if (model != "gpt") throw UsageError("--embedding-on", "sparse-core is for --model gpt");
  if (chips) throw UsageError("--embedding-on", "sparse-core trains on one chip: not with --chips");
  return compiler::EmbeddingOn::kSparseCore;
}

// --pe, --vmem-handoff-bytes and --set as flat config overrides.
nlohmann::json train_config_overrides(const TrainArgs& a) {
  nlohmann::json o = cli::config_overrides(a.sets);
  if (!a.pe.empty()) o["core.mxu.pe"] = a.pe == "term-serial" ? "term-serial" : "bf16";
  if (a.vmem_handoff_bytes) {
    if (*a.vmem_handoff_bytes < 0) throw UsageError("--vmem-handoff-bytes", "must be >= 0");
    o["core.sparse.vmem_handoff_bytes"] = *a.vmem_handoff_bytes;
  }
  return o;
}

// Error for --bucket-words / --no-overlap without --chips, a negative bucket, --no-overlap without
// buckets.
void check_data_parallel_flags(bool chips, int64_t bucket_words, bool no_overlap) {
  if (!chips && (bucket_words != 0 || no_overlap))
    throw UsageError("train", "--bucket-words and --no-overlap need --chips");
  if (bucket_words < 0)
    throw UsageError("train", fmt::format("--bucket-words {}: must be >= 0", bucket_words));
  if (no_overlap && bucket_words == 0)
    throw UsageError("train",
                     "--no-overlap needs --bucket-words (without buckets nothing overlaps)");
}

void print_pe(const nlohmann::ordered_json& pe) {
  if (pe["pe"] != "term-serial") return;
  for (const auto& [phase, w] : pe["phases"].items()) {
    const double slots = w["terms_processed"].get<double>() +
                         w["terms_skipped_zero"].get<double>() +
                         w["terms_skipped_oob"].get<double>();
    std::printf(
        "  %-11s MXU %lld cycles  speed-up %.3f (equal PEs) %.3f (equal area)  terms %.1f%% "
        "processed, "
        "%.1f%% zero, %.1f%% out of bounds  %.1f uJ\n",
        phase.c_str(), static_cast<long long>(w["busy_cycles"].get<int64_t>()),
        w["speedup_equal_pe"].get<double>(), w["speedup_equal_area"].get<double>(),
        slots > 0 ? 100 * w["terms_processed"].get<double>() / slots : 0.0,
        slots > 0 ? 100 * w["terms_skipped_zero"].get<double>() / slots : 0.0,
        slots > 0 ? 100 * w["terms_skipped_oob"].get<double>() / slots : 0.0,
        1e-6 * w["energy_pj"].get<double>());
  }
}

void run_profile(const TrainArgs& a, const runtime::TrainingRunOptions& o,
                 const runtime::Dataset& train, const runtime::Dataset& test) {
  if (o.config.spec.mxu_pe != core::MxuPe::TermSerial)
    throw UsageError("train", "--profile-acc-width needs term-serial PEs (--pe term-serial)");
  const int full_width = o.config.spec.term.tile.pe.acc_fraction_bits;
  if (a.profile_min_width < 1 || a.profile_min_width > full_width)
    throw UsageError("--profile-min-width",
                     fmt::format("{}: must be in [1, {}] (the accumulator width)",
                                 a.profile_min_width, full_width));
  // Both outputs opened before the trials, so an unwritable path fails now.
  std::optional<OutputFile> profile_out, report;
  if (!a.profile_out.empty()) profile_out.emplace(a.profile_out, "config");
  if (!a.report.empty()) report.emplace(a.report, "report");
  const runtime::AccuracyOf run = runtime::training_accuracy(train, test, o);
  int trial = 0;
  const runtime::AccuracyOf logged = [&](const std::vector<core::LayerAccWidth>& w) {
    const double acc = run(w);
    std::printf("trial %d: %s -> test accuracy %.2f%%\n", ++trial,
                core::format_layer_acc_widths(w).c_str(), 100 * acc);
    std::fflush(stdout);
    return acc;
  };
  const runtime::AccWidthProfile p = runtime::profile_acc_width(
      runtime::mxu_layers(o), o.config.spec.term.tile.pe.acc_fraction_bits, a.profile_min_width,
      0.005, logged);
  std::printf("chosen: %s (test accuracy %.2f%%, full width %.2f%%)\n",
              core::format_layer_acc_widths(p.chosen).c_str(), 100 * p.chosen_accuracy,
              100 * p.baseline_accuracy);
  if (profile_out)
    write_json(*profile_out, runtime::config_with_widths(o.config.resolved, p.chosen));
  if (report) {
    nlohmann::ordered_json r;
    r["model"] = a.m.model;
    r["config_hash"] = o.config.hash;
    r["resolved_config"] = o.config.resolved;
    r["acc_width_profile"] = runtime::profile_json(p);
    write_json(*report, report::tagged("acc-width-profile", r));
  }
}

// The epoch line: loss, accuracies (text: the validation loss and next-byte accuracy), simulated
// and host time (the host reference: host time only); one chip adds its cycles, unit
// utilisation and energy, then its optimizer, PE and HBM-encoding lines; a data-parallel run adds
// the MXU split of one processor's step (gpt) and its exchange line.
void print_epoch(const nlohmann::ordered_json& j, bool data_parallel, bool text) {
  if (text)
    std::printf("epoch %d: loss %.4f  validation loss %.4f (next-byte acc %.2f%%)  ",
                j["epoch"].get<int>(), j["loss"].get<double>(), j["test_loss"].get<double>(),
                100 * j["test_accuracy"].get<double>());
  else
    std::printf("epoch %d: loss %.4f  train acc %.2f%%  test acc %.2f%%  ", j["epoch"].get<int>(),
                j["loss"].get<double>(), 100 * j["train_accuracy"].get<double>(),
                100 * j["test_accuracy"].get<double>());
  if (!j.contains("sim_seconds")) {  // the host reference
    std::printf("host reference  host %.1f s\n", j["host_seconds"].get<double>());
    std::fflush(stdout);
    return;
  }
  std::printf("sim ");
  if (!data_parallel)
    std::printf("%lld cycles = ", static_cast<long long>(j["sim_cycles"].get<int64_t>()));
  std::printf("%.4f s (+ host link %.4f s)  %.0f %s/sim-s  ", j["sim_chip_seconds"].get<double>(),
              j["sim_host_link_seconds"].get<double>(),
              j[text ? "tokens_per_sim_second" : "samples_per_sim_second"].get<double>(),
              text ? "tokens" : "samples");
  if (!data_parallel) {
    std::printf("MXU %.1f%%  ", 100 * j["mxu_utilization"].get<double>());
    if (j.contains("mxu_split"))
      std::printf("(attention %.1f%%, dense %.1f%%)  ",
                  100 * j["mxu_split"]["attention"]["utilization"].get<double>(),
                  100 * j["mxu_split"]["dense"]["utilization"].get<double>());
    std::printf("vector %.1f%%  energy %.3f J  ", 100 * j["vector_utilization"].get<double>(),
                j["energy_j"].get<double>());
  }
  std::printf("host %.1f s\n", j["host_seconds"].get<double>());
  if (data_parallel && j.contains("mxu_split"))
    std::printf("  one processor's step: MXU attention %.1f%%, dense %.1f%%\n",
                100 * j["mxu_split"]["attention"]["utilization"].get<double>(),
                100 * j["mxu_split"]["dense"]["utilization"].get<double>());
  if (data_parallel) {
    std::printf(
        "  data parallel on %d processors: compute %.4f s  exchange %.4f s (%.1f%% of the chip "
        "time)  overlap %.4f s  links %.1f%% (busiest %.1f%%)  retransmissions %llu  scaling "
        "efficiency %.3f\n",
        j["processors"].get<int>(), j["compute_seconds"].get<double>(),
        j["exchange_seconds"].get<double>(), 100 * j["exchange_share"].get<double>(),
        j["overlap_seconds"].get<double>(), 100 * j["link_utilization"].get<double>(),
        100 * j["max_link_utilization"].get<double>(),
        static_cast<unsigned long long>(j["retransmissions"].get<uint64_t>()),
        j["scaling_efficiency"].get<double>());
  } else {
    if (j.contains("optimizer")) {
      const nlohmann::ordered_json& o = j["optimizer"];
      std::printf(
          "  optimizer: %.0f cycles/step (%.1f%% of the step)  %.0f HBM bytes/step  %.1f "
          "uJ/step\n",
          o["cycles_per_step"].get<double>(), 100 * o["cycle_share"].get<double>(),
          o["hbm_bytes_per_step"].get<double>(), o["energy_uj_per_step"].get<double>());
    }
    if (j.contains("pe")) print_pe(j["pe"]);
    if (const std::string hbm = runtime::hbm_encoding_line(j["hbm_encoding"]); !hbm.empty())
      std::printf("  %s\n", hbm.c_str());
  }
  std::fflush(stdout);
}

// The model of --model and the gpt size flags (UsageError naming the flag that is wrong).
// The dataset of --dataset (default: fortunes for gpt, else fashion-mnist), checked against the
// model before anything loads.
std::string train_dataset(const TrainArgs& a) {
  const bool gpt = a.m.model == "gpt", bert = a.m.model == "bert";
  const std::string d = !a.dataset.empty() ? a.dataset
                        : gpt              ? "fortunes"
                        : bert             ? "synthetic"
                                           : "fashion-mnist";
  if (d != "fashion-mnist" && d != "fortunes" && d != "synthetic")
    throw UsageError("train",
                     "unknown dataset '" + d + "' (known: fashion-mnist, fortunes, synthetic)");
  if (d == "synthetic" && !is_resnet(a.m.model) && !bert)
    throw UsageError("--dataset", "synthetic data trains --model resnet18|resnet50|bert, not '" +
                                      a.m.model + "'");
  if (gpt && d != "fortunes")
    throw UsageError("--dataset",
                     "'" + d + "' holds images; --model gpt trains on text (fortunes)");
  if (bert && d == "fashion-mnist")
    throw UsageError("--dataset",
                     "'" + d + "' holds images; --model bert trains on text (synthetic, fortunes)");
  if (!gpt && !bert && d == "fortunes")
    throw UsageError("--dataset",
                     "fortunes is text; it trains --model gpt|bert, not '" + a.m.model + "'");
  return d;
}

constexpr int64_t kSyntheticBatches = 8;

// The run's datasets (`dataset`: train_dataset's): synthetic images or byte windows (a text
// model's: bert), the fortunes corpus (gpt, bert), or Fashion-MNIST's splits (read on `threads`
// threads: runtime::load_fashion_mnist_splits), the test split cut to --steps x --batch samples.
void load_datasets(const TrainArgs& a, const runtime::RunOptions& o, const std::string& dataset,
                   int threads, runtime::Dataset& train, runtime::Dataset& test) {
  const int context = o.model.context();  // 0: the model takes images
  if (dataset == "synthetic") {
    // --steps batches to train on (default kSyntheticBatches), one batch to evaluate.
    const int64_t count = a.steps.value_or(kSyntheticBatches) * a.batch;
    if (context > 0) {
      train = runtime::synthetic_text("synthetic/train", count, context, a.seed);
      test = runtime::synthetic_text("synthetic/test", a.batch, context, ~a.seed);
      return;
    }
    const graph::Shape& in = o.model.spec.input;
    const auto side = static_cast<int>(in[0]), channels = static_cast<int>(in[2]);
    const int classes = o.model.spec.classes;
    train = runtime::synthetic_images("synthetic/train", count, side, channels, classes, a.seed);
    test = runtime::synthetic_images("synthetic/test", a.batch, side, channels, classes, ~a.seed);
  } else if (dataset == "fortunes") {
    const runtime::TextCorpus corpus =
        runtime::load_fortunes(a.data_dir.empty() ? runtime::kFortunesDir : a.data_dir);
    const int64_t needed = int64_t{runtime::kValidationWindows} * context + 1;
    if (static_cast<int64_t>(corpus.validation.size()) < needed)
      throw UsageError(
          "--context",
          fmt::format("{}: the validation stream of {} bytes holds fewer than {} "
                      "windows of {} bytes",
                      context, corpus.validation.size(), runtime::kValidationWindows, context));
    train = runtime::fortunes_dataset(corpus, runtime::Split::kTrain, context);
    test = runtime::fortunes_dataset(corpus, runtime::Split::kTest, context);
  } else {
    const std::string dir = a.data_dir.empty() ? runtime::kFashionMnistDir : a.data_dir;
    std::tie(train, test) = runtime::load_fashion_mnist_splits(dir, threads);
    if (a.steps) test = runtime::take(test, std::min<int64_t>(test.count, *a.steps * a.batch));
  }
}

void run_train(const TrainArgs& a) {
  const std::string dataset = train_dataset(a);
  const bool text = dataset == "fortunes" || a.m.model == "bert";
  const int epochs = a.epochs.value_or(text ? 1 : 3);
  if (epochs < 1) throw UsageError("train", "--epochs must be >= 1");
  if (a.batch < 1) throw UsageError("train", "--batch must be >= 1");
  if (!(a.lr > 0)) throw UsageError("train", "--lr must be positive");
  if (a.steps && *a.steps < 1) throw UsageError("train", "--steps must be >= 1");
  if (!(a.host_gbps > 0)) throw UsageError("train", "--host-gbps must be positive");
  check_data_parallel_flags(a.chips != -1, a.bucket_words, a.no_overlap);
  // --chips: the machine and the flags checked before the datasets load.
  if (!a.allreduce.empty() && a.chips == -1) throw UsageError("train", "--allreduce needs --chips");
  runtime::TrainingRunOptions o;
  o.config = runtime::load_run_config(a.config, train_config_overrides(a));
  const system::SystemSpec machine =
      a.chips == -1
          ? system::SystemSpec{}
          : runtime::data_parallel_machine(o.config.system, a.chips, a.cores_per_chip, a.batch);
  const compiler::CollectiveAlgorithm allreduce = runtime::allreduce_for(a.allreduce, machine);
  o.model_name = a.m.model;
  o.model = model_from_flags(a.m, a.seed, a.dataset == "synthetic");
  o.trainer.batch = a.batch;
  o.trainer.optimizer.kind =
      parse_flag_value("--optimizer", [&] { return graph::optimizer_from_name(a.optimizer); });
  o.trainer.optimizer.lr = a.lr;
  o.trainer.seed = a.seed;
  o.trainer.host_bytes_per_second = a.host_gbps * 1e9;
  if (a.adam_on != "unit" && a.adam_on != "vector-unit")
    throw UsageError("train", "unknown --adam-on '" + a.adam_on + "' (known: unit, vector-unit)");
  o.trainer.adam_on = a.adam_on == "unit" ? compiler::AdamOn::kUnit : compiler::AdamOn::kVectorUnit;
  o.trainer.embedding_on = embedding_on(a.embedding_on, a.m.model, a.chips != -1);
  o.epochs = epochs;
  o.steps_limit = a.steps.value_or(0);
  o.checkpoint_dir = a.checkpoint_dir;
  o.checkpoint_every = a.checkpoint_every;
  o.checkpoint_keep = a.checkpoint_keep;
  o.resume = a.resume;
  o.eval_every = a.eval_every;
  const bool data_parallel = a.chips != -1;
  runtime::Dataset train, test;
  double load_seconds = 0;
  // With --chips while the trainer is built (DataParallelRun::load_and_build), else now.
  auto load = [&] {
    const auto load_start = std::chrono::steady_clock::now();
    load_datasets(a, o, dataset, data_parallel ? a.threads : 2, train, test);
    load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  };
  if (!data_parallel) load();
  if (a.executor != "chip" && a.executor != "host-f32")
    throw UsageError("--executor", "unknown '" + a.executor + "' (known: chip, host-f32)");
  const bool host = a.executor == "host-f32";
  if (host && (data_parallel || a.profile || !a.trace.empty() || !a.html.empty()))
    throw UsageError("--executor",
                     "host-f32 runs on the host: not with --chips, --profile-acc-width, --trace "
                     "or --html");
  if (!data_parallel && a.profile) return run_profile(a, o, train, test);
  std::unique_ptr<report::ChromeTrace> trace;
  if (!a.trace.empty()) {
    if (data_parallel) throw UsageError("--trace", "traces one chip: not with --chips");
    trace = std::make_unique<report::ChromeTrace>(o.config.spec.name, o.config.spec.clock_hz);
    o.trainer.trace = trace.get();
  }
  std::unique_ptr<runtime::RunLoop> run;
  try {
    if (data_parallel) {
      runtime::DataParallelRunOptions d;
      static_cast<runtime::RunOptions&>(d) = o;
      d.dp.trainer = o.trainer;
      d.dp.system = machine;
      d.dp.allreduce = allreduce;
      d.dp.fabric_seed = o.trainer.seed;
      d.dp.bucket_words = a.bucket_words;
      d.dp.overlap = !a.no_overlap;
      d.dp.comm = &system::world();  // under mpirun the processors are spread over the ranks
      d.dp.threads = a.threads;
      run = runtime::DataParallelRun::load_and_build(load, train, test, d);
    } else if (host) {
      runtime::HostRunOptions h;
      static_cast<runtime::RunOptions&>(h) = o;
      h.trainer = o.trainer;
      run = std::make_unique<runtime::HostRun>(train, test, h);
    } else {
      run = std::make_unique<runtime::TrainingRun>(train, test, o);
    }
  } catch (const Error& e) {
    // A gpt step the compiler cannot fit on the chip (vector memory, HBM, instruction memory, DMA
    // descriptors): the window length is the flag that grows every activation; name it.
    const bool compile_failed =
        e.where() == "compiler" || std::string(e.what()).find("vector memory") != std::string::npos;
    if (!text || !compile_failed) throw;
    throw UsageError("--context",
                     fmt::format("{}: the {} step (d-model {}, batch {}) does not fit the chip; a "
                                 "shorter --context or a smaller --batch or --d-model would ({})",
                                 o.model.context(), o.model.name(),
                                 o.model.gpt ? o.model.gpt->d_model : o.model.bert->d_model,
                                 o.trainer.batch, e.what()));
  }
  const bool writer = run->trainer().writes_files();
  // Opened (created or truncated) before training, so an unwritable path fails now, not after it.
  std::optional<OutputFile> report, html, trace_file;
  if (!a.report.empty() && writer) report.emplace(a.report, "report");
  if (!a.html.empty() && writer) html.emplace(a.html, "HTML report");
  if (trace && writer) trace_file.emplace(a.trace, "trace file");
  if (!run->resumed_from().empty() && writer)
    std::fprintf(stderr, "resumed from %s\n", run->resumed_from().c_str());
  runtime::TrainingCallbacks cb;
  cb.progress = [writer](int epoch, int64_t steps, int64_t total, double loss) {
    if (writer) print_training_progress(epoch, steps, total, loss);
  };
  cb.epoch_done = [data_parallel, text](const nlohmann::ordered_json& j) {
    print_epoch(j, data_parallel, text);
  };
  run->run(cb);
  nlohmann::ordered_json body = run->report();
  if (o.trainer.embedding_on == compiler::EmbeddingOn::kSparseCore && !host && !data_parallel) {
    const runtime::ChipTrainer& chip = static_cast<const runtime::TrainingRun&>(*run).trainer();
    body["embedding_on"] = "sparse-core";
    body["sparse_core"] = runtime::sparse_core_json(chip.core());
  }
  if (data_parallel)  // collective: every rank takes part
    body["host"] = static_cast<const runtime::DataParallelRun&>(*run).trainer().system().host_json(
        run->host_phases_json(load_seconds));
  const nlohmann::ordered_json r = report::tagged("train", body);
  if (report) write_json(*report, r);
  if (trace_file) trace->write(*trace_file);
  if (html)
    htmlreport::write_report({a.html, "train " + a.m.model, htmlreport::Kind::kTrain, r}, *html);
}

}  // namespace

void register_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "train a model on the simulated chip");
  cmd->add_option(
      "--model", args->m.model,
      "zoo model (mlp, cnn, gpt, bert, resnet18, resnet50), bow (fortunes-topics), dlrm "
      "(generated clicks), a model JSON file or an ONNX model (.onnx)");
  add_onnx_loss_flags(*cmd, args->m);
  cmd->add_option(
      "--dataset", args->dataset,
      "dataset: fashion-mnist (images; the default), fortunes (text; gpt's default) or "
      "synthetic (random 224x224x3 images in 1000 classes for resnet18/resnet50, random "
      "bytes for bert; bert's default)");
  cmd->add_option("--epochs", args->epochs, "epochs (default 3; gpt 1)");
  add_transformer_flags(*cmd, args->m);
  cmd->add_option("--batch", args->batch, "batch size");
  cmd->add_option("--optimizer", args->optimizer, "adam or sgd");
  cmd->add_option("--lr", args->lr, "learning rate");
  add_seed_flag(*cmd, args->seed, "initialisation and shuffling");
  add_config_flag(*cmd, args->config);
  add_report_flag(*cmd, args->report);
  add_html_flag(*cmd, args->html);
  add_trace_flag(*cmd, args->trace);
  cmd->add_option("--data-dir", args->data_dir,
                  "Fashion-MNIST directory, or the fortunes corpus directory (gpt)");
  cmd->add_option("--steps", args->steps,
                  "limit the steps per epoch (and the test set to steps x batch)");
  cmd->add_option("--host-gbps", args->host_gbps, "host link bandwidth into HBM, GB/s");
  cmd->add_option("--executor", args->executor,
                  "chip (the simulated chip, default) or host-f32 (the host reference executor in "
                  "fp32, OpenBLAS GEMMs: the same run for comparison)");
  cmd->add_option("--adam-on", args->adam_on,
                  "where Adam runs: unit (the Adam optimizer unit, default) or vector-unit");
  cmd->add_option("--embedding-on", args->embedding_on,
                  "gpt: where the token embedding runs, tensor-core (default) or sparse-core "
                  "(gather and gradient scatter-add; one chip)");
  cmd->add_option("--checkpoint-dir", args->checkpoint_dir,
                  "write checkpoints here (after every epoch)");
  cmd->add_option("--checkpoint-every", args->checkpoint_every, "also checkpoint every N steps");
  cmd->add_option("--eval-every", args->eval_every,
                  "also evaluate the test (validation) set every N steps (the report's evals)");
  cmd->add_option("--checkpoint-keep", args->checkpoint_keep,
                  "keep the newest N checkpoints (default 2)");
  cmd->add_flag("--resume", args->resume,
                "continue from the newest checkpoint in --checkpoint-dir");
  cmd->add_option("--chips", args->chips,
                  "train data-parallel on this many chips (runtime/data_parallel_run.h)");
  cmd->add_option("--allreduce", args->allreduce,
                  "with --chips: the gradient all-reduce, auto (default: torus where the machine's "
                  "grid has two or "
                  "more dimensions, else ring), ring or torus");
  cmd->add_option("--cores-per-chip", args->cores_per_chip,
                  "with --chips: cores per chip (default: the config's)");
  cmd->add_option("--bucket-words", args->bucket_words,
                  "with --chips: all-reduce the gradients in buckets of this many words, "
                  "overlapped with the backward "
                  "pass (0: one all-reduce after it, the default)");
  cmd->add_flag("--no-overlap", args->no_overlap,
                "with --bucket-words: run every bucket after the backward pass");
  add_threads_flag(*cmd, args->threads);
  cmd->add_option(
         "--pe", args->pe,
         "MXU processing element: bit-parallel (bf16) or term-serial (overrides core.mxu.pe)")
      ->check(CLI::IsMember({"bit-parallel", "bf16", "term-serial"}));
  cmd->add_flag("--profile-acc-width", args->profile,
                "search the narrowest accumulator width per layer (term-serial)");
  cmd->add_option("--profile-min-width", args->profile_min_width,
                  "narrowest width the search tries");
  cmd->add_option("--profile-out", args->profile_out,
                  "write the config with the chosen per-layer widths here");
  cmd->add_option("--vmem-handoff-bytes", args->vmem_handoff_bytes,
                  "the largest lookup result the sparse core hands straight into vector memory "
                  "(larger ones go through HBM; overrides core.sparse.vmem_handoff_bytes)");
  add_set_flag(*cmd, args->sets);
  add_dlrm_flags(*cmd, args->dlrm);
  add_resnet_flags(*cmd, args->m.resnet);
  cmd->callback([args, cmd] {
    auto given = [cmd](const char* flag) { return cmd->count(flag) > 0; };
    if (args->m.model == "dlrm")
      return run_train_dlrm(
          args->dlrm,
          {args->executor, args->report, args->config,
           given("--batch") ? std::optional<int>(args->batch) : std::nullopt,
           given("--lr") ? std::optional<double>(args->lr) : std::nullopt, args->steps, args->seed,
           train_config_overrides(*args), args->chips, args->cores_per_chip, args->threads});
    if (args->m.model != "bow") return run_train(*args);
    run_train_bow({args->dataset, args->data_dir, args->executor, args->report, args->config,
                   args->epochs, given("--batch") ? std::optional<int>(args->batch) : std::nullopt,
                   given("--lr") ? std::optional<double>(args->lr) : std::nullopt, args->steps,
                   args->seed, train_config_overrides(*args), args->host_gbps, args->chips,
                   args->checkpoint_dir, args->checkpoint_every, args->checkpoint_keep,
                   args->resume});
  });
}

}  // namespace tessera::cli
