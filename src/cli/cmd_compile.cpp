// `tessera compile --model mlp [--batch B] [--optimizer adam|sgd] [--lr X] [--inference]
//  [--config C] [--emit asm|stats] [--dump-after PASS|all] [-o FILE]
//  [--processors N [--allreduce ring|torus] [--bucket-words W]]`: compiles the model's training
// step (or inference pass) to one tensor-core program and writes its assembly or the compile
// statistics (JSON: bundles, kernels, GEMMs, HBM and vector-memory peaks). With --processors the
// step is data-parallel (batch B per processor): the program is the image with the gradient
// all-reduce (pass allreduce, or buckets with --bucket-words).
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "common/config.h"
#include "common/error.h"
#include "common/file_io.h"
#include "compiler/compiler.h"
#include "core/spec.h"
#include "graph/model.h"
#include "isa/disassembler.h"
#include "system/machine_spec.h"

namespace tessera::cli {

namespace {

struct CompileArgs {
  std::string model = "mlp", optimizer = "adam", config, emit = "stats", dump_after, output;
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
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
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
  const compiler::CompiledProgram p = compiler::compile(model_from_flag(a.model), spec, o);
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
  cmd->add_option("--model", args->model, "zoo model (mlp)");
  cmd->add_option("--batch", args->batch, "batch size");
  cmd->add_option("--optimizer", args->optimizer, "adam or sgd");
  cmd->add_option("--lr", args->lr, "learning rate");
  cmd->add_flag("--inference", args->inference, "compile the inference pass instead");
  add_config_flag(*cmd, args->config);
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
