#include "onnx/chip_model.h"

#include <cstring>

#include "common/error.h"
#include "core/core.h"
#include "core/mxu_attribution.h"
#include "graph/transformer_kernels.h"
#include "runtime/replica_state.h"

namespace tessera::onnx_import {

namespace {

const char* const kWhere = "onnx inference";

// The ids of input x are inside the tables of the embeddings that read them (the chip does not
// check them; the host executor does).
void check_ids(const graph::Graph& g, int x, const std::vector<int32_t>& ids) {
  for (const graph::Node& n : g.nodes())
    if (n.op == graph::OpKind::kEmbedding && n.inputs[1] == x)
      for (size_t i = 0; i < ids.size(); ++i)
        graph::kernels::check_id(ids[i], static_cast<int>(g.value(n.inputs[0]).shape[0]),
                                 static_cast<long>(i));
}

}  // namespace

graph::Model inference_model(const ImportedModel& m) {
  if (m.inputs.size() != 1)
    throw Error(kWhere, "the tensor core runs models with one input; this one has " +
                            std::to_string(m.inputs.size()) + " input(s)");
  if (m.outputs.size() != 1 || m.outputs[0].value < 0)
    throw Error(kWhere, "the tensor core runs models with one computed output; this one has " +
                            std::to_string(m.outputs.size()));
  graph::Model model;
  model.name = m.name.empty() ? "onnx" : m.name;
  model.graph = m.graph;
  graph::Graph& g = model.graph;
  model.input = m.inputs[0].value;
  const graph::Shape x = g.value(model.input).shape;
  if (x.empty()) throw Error(kWhere, "input '" + m.inputs[0].name + "' is a scalar: no batch");
  model.batch = static_cast<int>(x[0]);
  const graph::Shape y = g.value(m.outputs[0].value).shape;
  if (y.empty() || y[0] != x[0])
    throw Error(kWhere, "output " + graph::shape_str(y) + " does not keep the input's batch " +
                            std::to_string(x[0]));
  model.logits = m.outputs[0].value;
  model.params = g.params();
  model.fan_in.assign(model.params.size(), 1);
  return model;
}

compiler::CompiledProgram compile_inference(const ImportedModel& m, const core::CoreSpec& spec) {
  compiler::CompileOptions o;
  o.training = false;
  return compiler::compile(inference_model(m), spec, o);
}

ChipRun run_on_chip(const ImportedModel& m, const core::CoreSpec& spec, const Tensor& input) {
  const compiler::CompiledProgram p = compile_inference(m, spec);
  if (input.size() != p.x.words)
    throw Error(kWhere, "input has " + std::to_string(input.size()) +
                            " elements; the model takes " + std::to_string(p.x.words));
  core::Core core(spec, p.program);
  runtime::write_params(core, p, m.params);
  core::ArchState& s = core.host_state();
  std::vector<uint32_t> words(static_cast<size_t>(input.size()));
  const int x = m.inputs[0].value;
  if (m.graph.value(x).dtype == graph::DType::kF32) {
    std::memcpy(words.data(), input.floats().data(), 4 * words.size());
  } else {
    const std::vector<int32_t> ids = input.ints32("input '" + m.inputs[0].name + "'");
    check_ids(m.graph, x, ids);
    std::memcpy(words.data(), ids.data(), 4 * words.size());
  }
  s.hbm.write_block(p.x.hbm, words.data(), p.x.words);

  std::vector<int32_t> region_of_pc(static_cast<size_t>(p.program.code.size()), -1);
  for (size_t r = 0; r < p.mxu_regions.size(); ++r)
    for (int64_t pc = p.mxu_regions[r].first_pc; pc < p.mxu_regions[r].end_pc; ++pc)
      if (pc < static_cast<int64_t>(region_of_pc.size()))
        region_of_pc[pc] = static_cast<int32_t>(r);
  core::MxuAttribution attr;
  attr.begin(&region_of_pc, core.machine().mxu().stats());
  core.set_mxu_attribution(&attr);
  core.run();
  core.set_mxu_attribution(nullptr);

  ChipRun run;
  run.output = runtime::read_hbm_floats(core, p.logits.hbm, p.logits.words);
  run.cycles = core.cycles();
  run.bundles = core.bundles();
  run.seconds = static_cast<double>(run.cycles) / spec.clock_hz;
  run.mxu_macs = p.stats.mxu_macs;
  run.mxu_utilisation = run.cycles > 0
                            ? static_cast<double>(core.unit_busy_cycles(isa::Unit::Mxu)) /
                                  static_cast<double>(run.cycles)
                            : 0;
  for (size_t r = 0; r < p.mxu_regions.size(); ++r) {
    const core::MxuWork w = r < attr.work().size() ? attr.work()[r] : core::MxuWork{};
    run.layers.push_back({p.mxu_regions[r].role.layer, w.cycles, w.macs});
  }
  run.stats = core.stats().to_json();
  return run;
}

}  // namespace tessera::onnx_import
