#include "onnx/graph_on_chip.h"

#include <cstring>

#include "common/error.h"
#include "core/core.h"
#include "onnx/host_run.h"
#include "suite/row_program.h"

namespace tessera::onnx_import {

namespace {

template <typename T>
void write(core::ArchState& s, int64_t at, const std::vector<T>& v) {
  static_assert(sizeof(T) == 4);
  std::vector<uint32_t> words(v.size());
  std::memcpy(words.data(), v.data(), 4 * v.size());
  s.hbm.write_block(at, words.data(), static_cast<int64_t>(words.size()));
}

}  // namespace

std::vector<Tensor> run_graph_on_chip(const ImportedModel& m, const std::vector<Tensor>& inputs,
                                      const core::CoreSpec& spec) {
  if (inputs.size() != m.inputs.size())
    throw Error("onnx chip run", "the model takes " + std::to_string(m.inputs.size()) +
                                     " inputs, got " + std::to_string(inputs.size()));
  const suite::RowProgram r = suite::row_program(m.graph, spec);
  core::Core core(spec, r.program);
  core::ArchState& s = core.host_state();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int v = m.inputs[k].value;
    if (m.graph.value(v).dtype == graph::DType::kF32)
      write(s, r.hbm.at(v), inputs[k].floats());
    else
      write(s, r.hbm.at(v), inputs[k].ints32("input '" + m.inputs[k].name + "'"));
  }
  const std::vector<int> params = m.graph.params();
  for (size_t k = 0; k < params.size(); ++k) write(s, r.hbm.at(params[k]), m.params[k]);
  for (int v : m.graph.constants()) write(s, r.hbm.at(v), *m.graph.value(v).data);
  core.run();
  return model_outputs(m, [&](int v) {
    std::vector<float> y(static_cast<size_t>(graph::num_elements(m.graph.value(v).shape)));
    core.state().hbm.read_block(r.hbm.at(v), reinterpret_cast<uint32_t*>(y.data()),
                                static_cast<int64_t>(y.size()));
    return y;
  });
}

}  // namespace tessera::onnx_import
