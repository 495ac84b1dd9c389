// `tessera import model.onnx [--input-shape NAME=1x3x224x224 ...] [--emit graph|stats|asm]
//  [--config C] [-o FILE]`: imports an ONNX model (src/onnx/importer.h) and writes the graph IR
// (one line per value and node), its statistics (JSON: opset, inputs, outputs, parameters, nodes
// per graph op) or the assembly of its inference pass on the tensor core (onnx/chip_model.h).
// With `--input NAME=FILE.pb ...` it runs the imported model on the host fp32 executor instead
// and writes its first output (`--host-output FILE.pb`), and with `--expect FILE.pb` prints how
// it matches that expected output (the largest relative error, top-1 agreement per row).
// `tessera import --conformance-report [--node-tests DIR]` runs ONNX's backend node tests on the
// host executor instead (onnx/conformance.h) and writes the per-op table of docs/onnx.md.
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "common/file_io.h"
#include "compiler/compiler.h"
#include "isa/disassembler.h"
#include "onnx/chip_model.h"
#include "onnx/conformance.h"
#include "onnx/host_run.h"
#include "onnx/importer.h"
#include "system/machine_spec.h"

namespace tessera::cli {

namespace {

struct ImportArgs {
  std::string model, emit = "graph", config, output;
  std::vector<std::string> input_shapes, inputs;
  std::string host_output, expect;
  bool conformance = false;
  std::string node_tests = onnx_import::kNodeTestDir;
};

nlohmann::json import_stats(const onnx_import::ImportedModel& m) {
  nlohmann::json j;
  j["name"] = m.name;
  j["opset"] = m.opset;
  for (const auto& in : m.inputs)
    j["inputs"].push_back({{"name", in.name}, {"shape", m.graph.value(in.value).shape}});
  for (const auto& out : m.outputs)
    j["outputs"].push_back(
        {{"name", out.name},
         {"shape", out.value < 0 ? out.constant.shape : m.graph.value(out.value).shape}});
  int64_t elements = 0;
  for (const auto& p : m.params) elements += static_cast<int64_t>(p.size());
  j["parameters"] = m.params.size();
  j["parameter_elements"] = elements;
  std::map<std::string, int> ops;
  for (const graph::Node& n : m.graph.nodes()) ++ops[std::string(graph::op_name(n.op))];
  j["nodes"] = m.graph.nodes().size();
  j["ops"] = ops;
  return j;
}

onnx_import::ImportOptions import_options(const std::vector<std::string>& flags) {
  onnx_import::ImportOptions o;
  for (const std::string& f : flags) o.input_shapes.insert(onnx_import::parse_input_shape(f));
  return o;
}

void write_output(const ImportArgs& a, const std::string& text) {
  if (a.output.empty())
    std::cout << text;
  else
    write_file(a.output, text);
}

// The model on the host fp32 executor with the --input files (their shapes bind symbolic dims).
void run_host(const ImportArgs& a) {
  const auto files = onnx_import::read_input_files(a.inputs);
  onnx_import::ImportOptions options = import_options(a.input_shapes);
  onnx_import::bind_input_shapes(files, options);
  const onnx_import::ImportedModel m =
      onnx_import::import_model(onnx_import::load_model_file(a.model), options);
  std::vector<onnx_import::Tensor> inputs;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const auto it = files.find(m.inputs[k].name);
    if (it == files.end())
      throw UsageError("--input", "give the model's input '" + m.inputs[k].name + "'");
    inputs.push_back(onnx_import::input_tensor(m, k, it->second.second, it->second.first));
  }
  const onnx_import::Tensor y = onnx_import::run_on_host(m, inputs).at(0);
  if (!a.host_output.empty())
    onnx_import::write_tensor_file(a.host_output,
                                   onnx_import::to_proto(m.outputs[0].name, y.shape, y.floats()));
  if (a.expect.empty()) return;
  const onnx_import::Tensor e =
      onnx_import::from_proto(onnx_import::read_tensor_file(a.expect), a.expect);
  const onnx_import::OutputMatch r = onnx_import::compare_output(y, e);
  std::cout << fmt::format(
      "output {} {}: largest error {:.3g} ({:.3g} of the largest |expected| {:.4g}); top-1 "
      "agrees on {} / {} rows\n",
      m.outputs[0].name, graph::shape_str(y.shape), r.max_abs_error, r.relative_error(),
      r.max_abs_expected, r.top1_agree, r.rows);
}

void run_import(const ImportArgs& a) {
  if (a.conformance != a.model.empty())
    throw UsageError("import", "give either a model or --conformance-report");
  if (a.conformance) {
    write_output(a, onnx_import::conformance_markdown(onnx_import::run_node_tests(a.node_tests)));
    return;
  }
  if (!a.inputs.empty()) {
    run_host(a);
    return;
  }
  if (a.emit != "graph" && a.emit != "stats" && a.emit != "asm")
    throw UsageError("import", "--emit must be graph, stats or asm, got '" + a.emit + "'");
  const onnx_import::ImportOptions options = import_options(a.input_shapes);
  const onnx_import::ImportedModel m =
      onnx_import::import_model(onnx_import::load_model_file(a.model), options);
  std::string text;
  if (a.emit == "graph") {
    text = m.graph.dump();
  } else if (a.emit == "stats") {
    text = import_stats(m).dump(2) + "\n";
  } else {
    const core::CoreSpec spec = system::load_machine_spec(a.config).core;
    text = isa::disassemble(onnx_import::compile_inference(m, spec).program);
  }
  write_output(a, text);
}

}  // namespace

void register_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand("import", "import an ONNX model into the graph IR");
  cmd->add_option("model", args->model, "the .onnx file");
  cmd->add_option("--input-shape", args->input_shapes,
                  "NAME=D1xD2x...: the shape of a graph input (binds its symbolic dims); "
                  "repeatable");
  cmd->add_option("--emit", args->emit, "graph (the IR), stats (JSON) or asm (inference pass)");
  add_config_flag(*cmd, args->config);
  cmd->add_flag("--conformance-report", args->conformance,
                "run ONNX's backend node tests on the host executor; write the per-op table");
  cmd->add_option("--node-tests", args->node_tests, "the node tests' directory");
  cmd->add_option("-o,--output", args->output, "write here instead of standard output");
  cmd->add_option("--input", args->inputs,
                  "NAME=FILE.pb: run on the host fp32 executor with this input; repeatable");
  cmd->add_option("--host-output", args->host_output,
                  "with --input: write the first output here (TensorProto)");
  cmd->add_option("--expect", args->expect,
                  "with --input: compare the first output with this TensorProto");
  cmd->callback([args] { run_import(*args); });
}

}  // namespace tessera::cli
