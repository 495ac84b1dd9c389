// `tessera infer --model model.onnx --input NAME=file.pb ... [--output out.pb] [--config C]
//  [--json]`: one forward pass of an imported ONNX model on the simulated tensor core
// (onnx/chip_model.h). Inputs and the output are ONNX TensorProto files; an input's shape binds
// the graph's symbolic dims. Prints cycles, time, MXU utilisation and the cycles of each MXU
// layer (or, with --json, those and the core's statistics as JSON).
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "onnx/chip_model.h"
#include "onnx/host_run.h"
#include "onnx/importer.h"
#include "system/machine_spec.h"

namespace tessera::cli {

namespace {

struct InferArgs {
  std::string model, output, config;
  std::vector<std::string> inputs;
  bool json = false;
};

void print_run(const onnx_import::ChipRun& r, bool json) {
  if (json) {
    nlohmann::ordered_json j;
    j["cycles"] = r.cycles;
    j["seconds"] = r.seconds;
    j["mxu_utilisation"] = r.mxu_utilisation;
    for (const auto& l : r.layers)
      j["layers"].push_back({{"layer", l.layer}, {"cycles", l.cycles}, {"macs", l.macs}});
    j["core"] = r.stats;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("cycles {}  time {:.3f} ms  MXU utilisation {:.1f}%\n", r.cycles,
                           r.seconds * 1e3, 100.0 * r.mxu_utilisation);
  for (const auto& l : r.layers)
    std::cout << fmt::format("  {:<32} {:>12} cycles {:>14} MACs\n", l.layer, l.cycles, l.macs);
}

void run_infer(const InferArgs& a) {
  const auto files = onnx_import::read_input_files(a.inputs);  // name -> (path, tensor)
  onnx_import::ImportOptions options;
  onnx_import::bind_input_shapes(files, options);
  const onnx_import::ImportedModel m =
      onnx_import::import_model(onnx_import::load_model_file(a.model), options);
  if (m.inputs.size() != 1 || files.size() != 1 || !files.count(m.inputs[0].name))
    throw UsageError("--input", "give exactly the model's input" +
                                    (m.inputs.empty() ? "" : " '" + m.inputs[0].name + "'"));
  const auto& [path, proto] = files.begin()->second;
  const onnx_import::Tensor x = onnx_import::input_tensor(m, 0, proto, path);
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
  const onnx_import::ChipRun r = onnx_import::run_on_chip(m, spec, x);
  print_run(r, a.json);
  if (!a.output.empty()) {
    const int y = m.outputs[0].value;
    onnx_import::write_tensor_file(
        a.output, onnx_import::to_proto(m.outputs[0].name, m.graph.value(y).shape, r.output));
  }
}

}  // namespace

void register_infer_command(CLI::App& app) {
  auto args = std::make_shared<InferArgs>();
  CLI::App* cmd =
      app.add_subcommand("infer", "one forward pass of an ONNX model on the simulated tensor core");
  cmd->add_option("--model", args->model, "the .onnx file")->required();
  cmd->add_option("--input", args->inputs, "NAME=FILE.pb: the input tensor (ONNX TensorProto)")
      ->required();
  cmd->add_option("--output", args->output, "write the output tensor here (TensorProto)");
  add_config_flag(*cmd, args->config);
  cmd->add_flag("--json", args->json, "print the run's statistics as JSON");
  cmd->callback([args] { run_infer(*args); });
}

}  // namespace tessera::cli
