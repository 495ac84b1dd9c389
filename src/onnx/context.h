// The state of one import: ONNX names bound to graph values or to host constants, and the node
// being converted, with the helpers every op converter (ops_*.cpp) uses.
//
// A name is bound either to a graph value or to a constant Tensor (initializers, Constant nodes,
// anything folded from constants: the shape subgraphs). A float initializer of the file that a
// graph op consumes becomes a graph parameter (trainable; named after it; its initial value kept
// in params()); any other float constant a graph op consumes (Constant nodes, folded values, and
// what the converters make: pooling counts, masks, bounds, epsilons, folded statistics) becomes a
// graph constant (graph::ValueKind::kConst), which training never changes. Integer constants never
// enter the graph: ops take them as attributes (shapes, axes, indices).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "common/error.h"
#include "graph/graph.h"
#include "onnx/state_value.h"
#include "onnx/tensor.h"

namespace tessera::onnx_import {

// A node the importer cannot convert; its why says which attribute or shape.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// The permutation that undoes `perm` (output dim i of the inverse is dim j where perm[j] == i).
graph::Shape inverse_permutation(const graph::Shape& perm);

class Context {
 public:
  Context(graph::Graph& g, int64_t opset) : m_g(g), m_opset(opset) {}

  // --- bindings
  void bind_value(const std::string& name, int value) { m_values[name] = value; }
  void bind_constant(const std::string& name, Tensor t);
  // A constant that is an initializer of the file: a parameter where a graph op consumes it.
  void bind_initializer(const std::string& name, Tensor t);
  bool is_bound(const std::string& name) const;
  bool is_constant_name(const std::string& name) const { return m_constants.count(name) > 0; }
  const Tensor& constant_named(const std::string& name) const { return m_constants.at(name); }
  int value_named(const std::string& name);
  // Every ONNX name bound to a graph value.
  const std::map<std::string, int>& value_names() const { return m_values; }
  // Initial values of the graph's parameters, graph.params() order.
  const std::vector<std::vector<float>>& params() const { return m_params; }
  graph::Graph& graph() { return m_g; }
  int64_t opset() const { return m_opset; }
  void set_batch_norm(BatchNormStatistics b) { m_batch_norm = b; }
  BatchNormStatistics batch_norm() const { return m_batch_norm; }
  // The state values made so far (state_input), in creation order.
  const std::vector<StateValue>& state() const { return m_state; }

  // --- the node being converted
  void begin(const onnx::NodeProto& n) { m_node = &n; }
  const onnx::NodeProto& node() const { return *m_node; }
  std::string node_label() const;
  // Input i is present (ONNX marks an omitted optional input with an empty name).
  bool has_input(int i) const;
  bool is_constant(int i) const;
  const Tensor& constant(int i) const;  // Unsupported unless input i is a constant
  // Input i is a float initializer of the file (a graph op consuming it makes a parameter).
  bool is_trainable(int i) const;
  int value(int i);  // input i as a graph value
  graph::Shape shape(int i) const;
  // A constant integer input as int64s (axes, shapes, pads).
  std::vector<int64_t> ints(int i) const;
  int num_outputs() const { return m_node->output_size(); }
  void set_output(int k, int value);
  void set_output(int k, Tensor t);

  // --- attributes
  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t def) const;
  double attr_float(const std::string& name, double def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  const onnx::TensorProto* attr_tensor(const std::string& name) const;
  // Axis `a` of a rank-`rank` tensor, negative counted from the end; Unsupported when outside.
  int64_t axis(int64_t a, int64_t rank) const;

  // --- graph construction
  int emit(graph::OpKind op, std::vector<int> inputs, graph::Attrs attrs = {});
  int permute(int v, const graph::Shape& perm);   // cancels against a producing inverse permute
  int reshape(int v, const graph::Shape& shape);  // no node when the shape is unchanged
  int scale(int v, double factor);                // no node for factor 1
  // An elementwise one-input op; applied before a producing permute (which then follows it), so
  // layout permutes around elementwise chains meet and cancel.
  int elementwise(graph::OpKind op, int v, graph::Attrs attrs = {});
  // A trainable parameter with initial value `data` (params()).
  int param(const std::string& name, const graph::Shape& shape, std::vector<float> data);
  // A graph constant (never trained).
  int constant_value(const std::string& name, const graph::Shape& shape, std::vector<float> data);
  // `t`, computed on the host from input i's constant by a change the training of the value does
  // not mind (a layout, a sign, a scale): a parameter when input i is trainable and `trainable`,
  // else a constant.
  int derived(int i, const std::string& name, const Tensor& t, bool trainable = true);
  [[noreturn]] void unsupported(const std::string& why) const;
  // Input i, a float initializer, as a state graph input named after it (one per name; Unsupported
  // for any other input), and the value that holds its next value.
  int state_input(int i);
  void set_state_update(int state, int update);

 private:
  const onnx::AttributeProto* attr(const std::string& name) const;
  std::string unique_name(const std::string& name) const;  // `name`, or name.K when taken

  graph::Graph& m_g;
  int64_t m_opset;
  const onnx::NodeProto* m_node = nullptr;
  std::map<std::string, int> m_values;
  std::map<std::string, Tensor> m_constants;
  std::set<std::string> m_initializers;  // float initializers of the file, still bound as such
  std::vector<std::vector<float>> m_params;
  BatchNormStatistics m_batch_norm = BatchNormStatistics::kAsInFile;
  std::vector<StateValue> m_state;
};

}  // namespace tessera::onnx_import
