#include "onnx/host_run.h"

#include "common/error.h"
#include "graph/executor.h"

namespace tessera::onnx_import {

Tensor input_tensor(const ImportedModel& m, size_t k, const onnx::TensorProto& t,
                    const std::string& where) {
  const ImportedModel::Input& in = m.inputs.at(k);
  const graph::Value& v = m.graph.value(in.value);
  const bool want_float = v.dtype == graph::DType::kF32;
  if (want_float ? !is_float_type(t.data_type()) : !is_integer_type(t.data_type()))
    throw Error(where, "holds " + elem_type_name(t.data_type()) + "; input '" + in.name +
                           "' takes " + elem_type_name(in.elem_type));
  Tensor x = from_proto(t, where);
  if (x.shape != v.shape)
    throw Error(where, "has shape " + graph::shape_str(x.shape) + "; input '" + in.name + "' has " +
                           graph::shape_str(v.shape));
  return x;
}

std::vector<Tensor> run_on_host(const ImportedModel& m, const std::vector<Tensor>& inputs) {
  if (inputs.size() != m.inputs.size())
    throw Error("onnx host run", "the model takes " + std::to_string(m.inputs.size()) +
                                     " inputs, got " + std::to_string(inputs.size()));
  graph::Executor<float> ex(m.graph, graph::Numerics::kF32);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int v = m.inputs[k].value;
    if (m.graph.value(v).dtype == graph::DType::kF32)
      ex.set(v, inputs[k].floats());
    else
      ex.set_labels(v, inputs[k].ints32("input '" + m.inputs[k].name + "'"));
  }
  const std::vector<int> params = m.graph.params();
  for (size_t k = 0; k < params.size(); ++k) ex.set(params[k], m.params[k]);
  ex.run();
  return model_outputs(m, [&](int v) { return ex.get(v); });
}

std::vector<Tensor> model_outputs(const ImportedModel& m,
                                  const std::function<std::vector<float>(int)>& read) {
  std::vector<Tensor> outs;
  for (const ImportedModel::Output& o : m.outputs) {
    if (o.value < 0) {
      outs.push_back(o.constant);
      continue;
    }
    Tensor t;
    t.shape = m.graph.value(o.value).shape;
    const std::vector<float> y = read(o.value);
    t.f.assign(y.begin(), y.end());
    outs.push_back(std::move(t));
  }
  return outs;
}

}  // namespace tessera::onnx_import
