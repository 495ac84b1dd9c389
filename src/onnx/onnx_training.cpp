#include "onnx/onnx_training.h"

#include <filesystem>
#include <memory>
#include <set>

#include "common/error.h"
#include "onnx/model_file.h"
#include "onnx/tensor.h"

namespace tessera::onnx_import {

namespace {

const std::string kLossPrefix = "softmax-ce:";

std::string names_of(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

// The graph inputs that are not initializers: (name, is integer, dims; -1 for a symbolic dim).
struct FileInput {
  std::string name;
  bool integer = false;
  graph::Shape dims;
};
std::vector<FileInput> file_inputs(const ModelFile& f) {
  std::set<std::string> inits;
  for (const auto& t : f.proto.graph().initializer()) inits.insert(t.name());
  std::vector<FileInput> out;
  for (const auto& in : f.proto.graph().input()) {
    if (inits.count(in.name())) continue;
    FileInput fi{in.name(), is_integer_type(in.type().tensor_type().elem_type()), {}};
    for (const auto& d : in.type().tensor_type().shape().dim())
      fi.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    out.push_back(std::move(fi));
  }
  return out;
}

}  // namespace

std::string loss_output_from_flag(const std::string& flag) {
  if (flag.empty())
    throw UsageError("--loss", "--model x.onnx needs the loss head: softmax-ce:OUTPUT_NAME");
  if (flag.rfind(kLossPrefix, 0) != 0 || flag.size() == kLossPrefix.size())
    throw UsageError("--loss", "'" + flag + "': the loss head is softmax-ce:OUTPUT_NAME");
  return flag.substr(kLossPrefix.size());
}

graph::Model training_model(const ImportedModel& m, const std::string& loss_output,
                            const std::string& label_input) {
  const std::string where = m.name.empty() ? "onnx training" : "onnx model '" + m.name + "'";
  graph::Model model;
  model.name = m.name.empty() ? "onnx" : m.name;
  model.graph = m.graph;
  graph::Graph& g = model.graph;
  std::vector<std::string> input_names, output_names;
  for (const ImportedModel::Input& in : m.inputs) {
    input_names.push_back(in.name);
    if (in.name == label_input) {
      if (g.value(in.value).dtype != graph::DType::kI32)
        throw Error(where, "label input '" + label_input + "' is not an integer tensor");
      model.labels = in.value;
    } else if (model.input < 0 && g.value(in.value).dtype == graph::DType::kF32) {
      model.input = in.value;
    } else {
      throw Error(where,
                  "input '" + in.name +
                      "' is neither the one float input nor the label input (--label-input)");
    }
  }
  if (model.input < 0) throw Error(where, "no float input (inputs: " + names_of(input_names) + ")");
  const graph::Shape x = g.value(model.input).shape;  // a copy: adding values moves them
  if (x.empty()) throw Error(where, "input '" + g.value(model.input).name + "' has no batch dim");
  for (const ImportedModel::Output& o : m.outputs) {
    output_names.push_back(o.name);
    if (o.name == loss_output) {
      if (o.value < 0) throw Error(where, "output '" + o.name + "' is a constant");
      model.logits = o.value;
    }
  }
  if (model.logits < 0)
    throw Error(where, "--loss names output '" + loss_output +
                           "', which the model does not have (outputs: " + names_of(output_names) +
                           ")");
  const graph::Shape y = g.value(model.logits).shape;
  if (y.empty() || y[0] != x[0])
    throw Error(where, "output '" + loss_output + "' " + graph::shape_str(y) +
                           " does not keep the batch " + std::to_string(x[0]) + " of the input");
  const int rows = y.size() == 2
                       ? model.logits
                       : g.add_node(graph::OpKind::kReshape, {model.logits},
                                    graph::Attrs::reshape({y[0], graph::num_elements(y) / y[0]}));
  if (model.labels < 0) model.labels = g.add_input(label_input, {x[0]}, graph::DType::kI32);
  if (g.value(model.labels).shape != graph::Shape{x[0]})
    throw Error(where, "label input '" + label_input + "' " +
                           graph::shape_str(g.value(model.labels).shape) + " is not [batch]");
  model.loss = g.add_node(graph::OpKind::kSoftmaxCrossEntropy, {rows, model.labels}, {}, "loss");
  model.batch = static_cast<int>(x[0]);
  model.params = g.params();
  model.fan_in.assign(model.params.size(), 1);
  for (const StateValue& s : m.state) model.state.push_back({s.value, s.update});
  return model;
}

runtime::TrainModel onnx_train_model(const std::string& path, const std::string& loss_output,
                                     const std::string& label_input) {
  auto file = std::make_shared<const ModelFile>(load_model_file(path));
  FileInput x;
  for (const FileInput& in : file_inputs(*file))
    if (!in.integer && in.name != label_input) x = in;
  if (x.name.empty() || x.dims.empty())
    throw Error(path, "no float input with a batch dim to train on");
  for (size_t d = 1; d < x.dims.size(); ++d)
    if (x.dims[d] < 0)
      throw Error(path, "input '" + x.name + "' dim " + std::to_string(d) +
                            " is symbolic; only the batch (dim 0) may be");
  // x's batch bound, as --input-shape would; batch normalisation's statistics as state
  auto bound = [x](int batch, BatchNormStatistics bn = BatchNormStatistics::kTrainState) {
    ImportOptions o;
    graph::Shape shape = x.dims;
    shape[0] = batch;
    o.input_shapes[x.name] = shape;
    o.batch_norm = bn;
    return o;
  };
  const ImportedModel one = import_model(*file, bound(1));
  graph::Model first;  // the loss head and the inputs checked up front, errors naming the file
  try {
    first = training_model(one, loss_output, label_input);
  } catch (const Error& e) {
    throw Error(path, e.why());
  }
  runtime::TrainModel t;
  t.spec.name = std::filesystem::path(path).stem().string();
  t.spec.input.assign(x.dims.begin() + 1, x.dims.end());
  if (t.spec.input.size() == 3 && t.spec.input[0] == 1)  // one-channel NCHW: the order of HWC
    t.spec.input = {t.spec.input[1], t.spec.input[2], 1};
  t.spec.classes = static_cast<int>(graph::num_elements(first.graph.value(first.logits).shape));
  t.build = [file, bound, loss_output, label_input](int batch) {
    return training_model(import_model(*file, bound(batch)), loss_output, label_input);
  };
  t.initial = one.params;
  if (!one.state.empty()) {
    for (const StateValue& s : one.state) t.initial_state.push_back(s.initial);
    t.build_eval = [file, bound, loss_output, label_input](int batch) {
      return training_model(import_model(*file, bound(batch, BatchNormStatistics::kEvalState)),
                            loss_output, label_input);
    };
  }
  return t;
}

}  // namespace tessera::onnx_import
