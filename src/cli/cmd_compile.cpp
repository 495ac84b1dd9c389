// `tessera compile --model M [--batch B] [--optimizer adam|sgd] [--lr X] [--inference]
//  [--config C] [--set KEY=VALUE ...] [--emit asm|stats] [--dump-after PASS|all] [-o FILE]
//  [--processors N [--allreduce ring|torus] [--bucket-words W]]`: compiles the model's training
// step (or inference pass) to one tensor-core program and writes its assembly or the compile
// statistics (JSON: bundles, kernels, GEMMs, HBM and vector-memory peaks). M is any model `train`
// takes but bow and dlrm (cli/model_flags.h: the zoo's mlp, cnn, gpt, bert, resnet18 and resnet50
// with their size flags, a model JSON file, an ONNX model with --loss); the ResNets are built for
// Fashion-MNIST's images, or with --dataset synthetic for 224 x 224 x 3 ones in 1000 classes. With
// --processors the step is data-parallel (batch B per processor): the program is the image with
// the gradient all-reduce (pass allreduce, or buckets with --bucket-words).
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "cli/model_flags.h"
#include "common/config.h"
#include "common/error.h"
#include "common/file_io.h"
#include "compiler/compiler.h"
#include "core/spec.h"
#include "graph/model.h"
#include "isa/disassembler.h"
#include "runtime/run_config.h"
#include "runtime/train_model.h"

namespace tessera::cli {

namespace {

struct CompileArgs {
  ModelFlags m;
  std::string dataset = "fashion-mnist";  // the ResNets' input
  std::string optimizer = "adam", config, emit = "stats", dump_after, output;
  std::vector<std::string> sets;  // --set KEY=VALUE config overrides
  int batch = 128;
  double lr = 1e-3;
  bool inference = false;
  int processors = 0;
  std::string allreduce = "ring";
  int64_t bucket_words = 0;
};

void run_compile(const CompileArgs& a) {
  if (a.emit != "asm" && a.emit != "stats")
    throw UsageError("compile", "--emit must be asm or stats, got '" + a.emit + "'");
  const core::CoreSpec spec = runtime::load_run_config(a.config, config_overrides(a.sets)).spec;
  compiler::CompileOptions o;
  o.batch = a.batch;
  o.training = !a.inference;
  o.optimizer.kind = graph::optimizer_from_name(a.optimizer);
  o.optimizer.lr = a.lr;
  o.dump_after = a.dump_after;
  o.dump = &std::cerr;
  if (a.processors > 0) {
    compiler::AllReduceOptions ar;
    ar.processors = a.processors;
    ar.shard = a.batch;
    ar.global_batch = a.batch * a.processors;
    ar.algorithm = compiler::algorithm_from_name(a.allreduce, "--allreduce");
    ar.bucket_words = a.bucket_words;
    o.allreduce = ar;
  }
  if (a.dataset != "fashion-mnist" && a.dataset != "synthetic")
    throw UsageError("--dataset",
                     "'" + a.dataset + "': the ResNets' input is fashion-mnist or synthetic");
  if (a.dataset == "synthetic" && !is_resnet(a.m.model))
    throw UsageError("--dataset", "synthetic sets the input of --model resnet18|resnet50");
  const compiler::CompiledProgram p =
      runtime::compile_train_model(model_from_flags(a.m, 0, a.dataset == "synthetic"), spec, o);
  const std::string text =
      a.emit == "asm" ? isa::disassemble(p.program) : compiler::stats_json(p.stats) + "\n";
  if (a.output.empty()) {
    std::cout << text;
    return;
  }
  write_file(a.output, text);
}

}  // namespace

void register_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd =
      app.add_subcommand("compile", "compile a model's training step to one tensor-core program");
  cmd->add_option("--model", args->m.model,
                  "zoo model (mlp, cnn, gpt, bert, resnet18, resnet50), a model JSON file or an "
                  "ONNX model (.onnx)");
  add_onnx_loss_flags(*cmd, args->m);
  add_transformer_flags(*cmd, args->m);
  add_resnet_flags(*cmd, args->m.resnet);
  cmd->add_option("--dataset", args->dataset,
                  "resnet18/resnet50: fashion-mnist (28x28 images padded to --image, 10 classes; "
                  "the default) or synthetic (224x224x3 images, 1000 classes)");
  cmd->add_option("--batch", args->batch, "batch size");
  cmd->add_option("--optimizer", args->optimizer, "adam or sgd");
  cmd->add_option("--lr", args->lr, "learning rate");
  cmd->add_flag("--inference", args->inference, "compile the inference pass instead");
  add_config_flag(*cmd, args->config);
  add_set_flag(*cmd, args->sets);
  cmd->add_option("--emit", args->emit, "asm or stats");
  cmd->add_option("--dump-after", args->dump_after,
                  "print the IR after a pass (autodiff, plan-hbm, lower, allreduce, buckets, all) "
                  "to stderr");
  cmd->add_option("--processors", args->processors,
                  "data-parallel over N processors: the image with the gradient all-reduce");
  cmd->add_option("--allreduce", args->allreduce, "with --processors: ring or torus");
  cmd->add_option(
      "--bucket-words", args->bucket_words,
      "with --processors: buckets of at most W words overlapped with the backward pass");
  add_output_flag(*cmd, args->output, "the assembly or the statistics");
  cmd->callback([args] { run_compile(*args); });
}

}  // namespace tessera::cli
