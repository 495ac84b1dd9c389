// The graph IR: values (typed, shaped tensors) and nodes (one op, its input values, one output).
//
// Contract:
//   * Values and nodes are numbered densely in creation order; a node's inputs always exist
//     before it, so node order is a topological order (the executor and the compiler run nodes
//     in that order).
//   * A value is an input (fed each step: images, labels), a parameter (trainable weights, f32),
//     a constant (f32 values the graph holds: never trained, never part of the training state;
//     executors and compiled programs take them from the graph) or the output of exactly one
//     node. Value names are unique.
//   * add_node() infers the output shape and dtype (shape_inference.h) and throws
//     tessera::Error naming the op and the shapes when they do not fit.
//   * verify() re-checks every invariant (after each compiler pass); dump() is a readable text
//     form, one line per value/node, stable for golden tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops.h"
#include "graph/tensor.h"
#include "numerics/embedding_bag.h"

namespace tessera::graph {

// Per-op attributes; each op reads only the fields its ops.def row names.
struct Attrs {
  int stride = 1;     // Conv2D*, MaxPool2D*
  int pad = 0;        // Conv2D*: zero padding on each side of H and W
  int kernel = 0;     // MaxPool2D*: square window size
  Shape shape = {};   // Reshape: target; Conv2DInputGrad: x's shape; Conv2DWeightGrad: w's shape;
                      // EmbeddingGrad, EmbeddingBagGrad: the table's shape; SelectGrad: x's shape;
                      // Broadcast, SumTo, ReduceMax, Slice*, Pad: the output's (Slice's) shape
  int index = 0;      // Select*: the index into the first dimension
  Shape perm = {};    // Permute: output dim i is input dim perm[i]
  double eps = 0;     // LayerNorm*: added to the variance (rounded to f32 in f32 and chip numerics)
  double scale = 1;   // Scale: the factor (likewise rounded)
  double rate = 0;    // Dropout: the probability of dropping an element, in [0, 1)
  uint32_t seed = 0;  // Dropout: the RNG stream's seed
  bool causal = false;       // Softmax: mask the future (see ops.def)
  bool transpose_a = false;  // BatchMatMul
  bool transpose_b = false;  // BatchMatMul
  Shape starts = {};         // Slice*: the first element per dim; Pad: x's offset per dim
  Shape steps = {};          // Slice*: the stride per dim (negative: backwards)
  Shape x_shape = {};        // SliceGrad: the sliced input's shape
  int axis = 0;              // Concat
  double fill = 0;           // Pad: the value outside x
  numerics::Combiner combiner = numerics::Combiner::Sum;  // EmbeddingBag*

  static Attrs conv(int stride, int pad, Shape shape = {}) {
    return {.stride = stride, .pad = pad, .shape = std::move(shape)};
  }
  static Attrs pool(int kernel, int stride) { return {.stride = stride, .kernel = kernel}; }
  static Attrs reshape(Shape shape) { return {.shape = std::move(shape)}; }
  static Attrs permute(Shape perm) { return {.perm = std::move(perm)}; }
  static Attrs layer_norm(double eps) { return {.eps = eps}; }
  static Attrs softmax(bool causal) { return {.causal = causal}; }
  static Attrs batch_matmul(bool transpose_a, bool transpose_b) {
    return {.transpose_a = transpose_a, .transpose_b = transpose_b};
  }
  static Attrs scaled(double scale) { return {.scale = scale}; }
  static Attrs dropout(double rate, uint32_t seed) { return {.rate = rate, .seed = seed}; }
  static Attrs select(int index, Shape shape = {}) {
    return {.shape = std::move(shape), .index = index};
  }
  static Attrs slice(Shape out, Shape starts, Shape steps, Shape x_shape = {}) {
    return {.shape = std::move(out),
            .starts = std::move(starts),
            .steps = std::move(steps),
            .x_shape = std::move(x_shape)};
  }
  static Attrs concat(int axis) { return {.axis = axis}; }
  static Attrs padded(Shape out, Shape starts, double fill) {
    return {.shape = std::move(out), .starts = std::move(starts), .fill = fill};
  }
  static Attrs embedding_bag(numerics::Combiner combiner, Shape table = {}) {
    return {.shape = std::move(table), .combiner = combiner};
  }
  friend bool operator==(const Attrs&, const Attrs&) = default;
};

enum class ValueKind : uint8_t { kInput, kParam, kConst, kNode };

struct Value {
  int id = -1;
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  ValueKind kind = ValueKind::kNode;
  int producer = -1;                               // node id for kNode, else -1
  std::shared_ptr<const std::vector<float>> data;  // kConst: the values (row-major), else null
};

struct Node {
  int id = -1;
  OpKind op = OpKind::kAdd;
  std::vector<int> inputs;
  int output = -1;
  Attrs attrs;
};

class Graph {
 public:
  // The largest tensor the IR accepts (element counts and their products stay in int range).
  static constexpr int64_t kMaxElements = int64_t{1} << 30;

  int add_input(const std::string& name, Shape shape, DType dtype = DType::kF32);
  int add_param(const std::string& name, Shape shape);
  // A constant of `shape` holding `data` (one float per element; else an Error).
  int add_constant(const std::string& name, Shape shape, std::vector<float> data);
  // Adds a node; its output value is named `name` (or "%<id>" when empty). Throws on bad
  // operands or shapes.
  int add_node(OpKind op, std::vector<int> inputs, Attrs attrs = {}, std::string name = "");

  const Value& value(int id) const;
  const Node& node(int id) const;
  const std::vector<Value>& values() const { return m_values; }
  const std::vector<Node>& nodes() const { return m_nodes; }
  // The value named `name`; throws Error if there is none.
  int find_value(const std::string& name) const;
  bool has_value(const std::string& name) const;
  std::vector<int> params() const;
  std::vector<int> constants() const;
  std::vector<int> inputs() const;

  // Checks ids, names, topological order, producers and re-infers every shape; throws Error.
  void verify() const;
  std::string dump() const;

 private:
  int add_value(Value v);

  std::vector<Value> m_values;
  std::vector<Node> m_nodes;
};

}  // namespace tessera::graph
