#include "onnx/host_run.h"

#include <algorithm>
#include <cmath>

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

std::map<std::string, std::pair<std::string, onnx::TensorProto>> read_input_files(
    const std::vector<std::string>& flags) {
  std::map<std::string, std::pair<std::string, onnx::TensorProto>> files;
  for (const std::string& flag : flags) {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size())
      throw UsageError("--input", "'" + flag + "' is not NAME=FILE.pb");
    const std::string path = flag.substr(eq + 1);
    files[flag.substr(0, eq)] = {path, read_tensor_file(path)};
  }
  return files;
}

void bind_input_shapes(
    const std::map<std::string, std::pair<std::string, onnx::TensorProto>>& files,
    ImportOptions& options) {
  for (const auto& [name, file] : files)
    options.input_shapes[name] = graph::Shape(file.second.dims().begin(), file.second.dims().end());
}

OutputMatch compare_output(const Tensor& actual, const Tensor& expected) {
  if (actual.shape != expected.shape)
    throw Error("output", "shape " + graph::shape_str(actual.shape) +
                              " differs from the expected " + graph::shape_str(expected.shape));
  OutputMatch m;
  for (int64_t k = 0; k < actual.size(); ++k) {
    m.max_abs_error = std::max(m.max_abs_error, std::abs(actual.at(k) - expected.at(k)));
    m.max_abs_expected = std::max(m.max_abs_expected, std::abs(expected.at(k)));
  }
  const int64_t cols = actual.shape.empty() ? 1 : actual.shape.back();
  m.rows = cols > 0 ? actual.size() / cols : 0;
  for (int64_t r = 0; r < m.rows; ++r) {
    auto argmax = [&](const Tensor& t) {
      int64_t best = 0;
      for (int64_t j = 1; j < cols; ++j)
        if (t.at(r * cols + j) > t.at(r * cols + best)) best = j;
      return best;
    };
    m.top1_agree += argmax(actual) == argmax(expected) ? 1 : 0;
  }
  return m;
}

}  // namespace tessera::onnx_import
