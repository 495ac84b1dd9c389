#include "graph/graph.h"

#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "graph/shape_inference.h"

namespace tessera::graph {

namespace {

std::string attrs_str(OpKind op, const Attrs& a) {
  switch (op) {
    case OpKind::kConv2D:
      return " stride=" + std::to_string(a.stride) + " pad=" + std::to_string(a.pad);
    case OpKind::kConv2DInputGrad:
    case OpKind::kConv2DWeightGrad:
      return " stride=" + std::to_string(a.stride) + " pad=" + std::to_string(a.pad) +
             " shape=" + shape_str(a.shape);
    case OpKind::kMaxPool2D:
    case OpKind::kMaxPool2DGrad:
      return " kernel=" + std::to_string(a.kernel) + " stride=" + std::to_string(a.stride);
    case OpKind::kReshape:
    case OpKind::kEmbeddingGrad:
      return " shape=" + shape_str(a.shape);
    case OpKind::kPermute:
      return " perm=" + shape_str(a.perm);
    case OpKind::kLayerNorm:
    case OpKind::kLayerNormGrad:
    case OpKind::kLayerNormGainGrad:
      return fmt::format(" eps={}", a.eps);
    case OpKind::kSoftmax:
      return a.causal ? " causal" : "";
    case OpKind::kBatchMatMul:
      return std::string(a.transpose_a ? " transpose_a" : "") +
             (a.transpose_b ? " transpose_b" : "");
    case OpKind::kScale:
      return fmt::format(" scale={}", a.scale);
    case OpKind::kDropout:
      return fmt::format(" rate={} seed={}", a.rate, a.seed);
    case OpKind::kSelect:
      return " index=" + std::to_string(a.index);
    case OpKind::kSelectGrad:
      return " index=" + std::to_string(a.index) + " shape=" + shape_str(a.shape);
    case OpKind::kBroadcast:
    case OpKind::kSumTo:
      return " shape=" + shape_str(a.shape);
    case OpKind::kSlice:
      return " starts=" + shape_str(a.starts) + " steps=" + shape_str(a.steps) +
             " shape=" + shape_str(a.shape);
    case OpKind::kSliceGrad:
      return " starts=" + shape_str(a.starts) + " steps=" + shape_str(a.steps) +
             " x_shape=" + shape_str(a.x_shape);
    case OpKind::kConcat:
      return " axis=" + std::to_string(a.axis);
    case OpKind::kEmbeddingBag:
      return " combiner=" + std::string(numerics::combiner_name(a.combiner));
    case OpKind::kEmbeddingBagGrad:
      return " combiner=" + std::string(numerics::combiner_name(a.combiner)) +
             " shape=" + shape_str(a.shape);
    default:
      return "";
  }
}

std::string type_str(const Value& v) {
  return std::string(dtype_name(v.dtype)) + shape_str(v.shape);
}

}  // namespace

int Graph::add_value(Value v) {
  if (v.name.empty()) v.name = std::string("%") + std::to_string(m_values.size());
  if (has_value(v.name)) throw Error("graph", "duplicate value name '" + v.name + "'");
  if (num_elements(v.shape) > kMaxElements)
    throw Error("value '" + v.name + "'",
                "shape " + shape_str(v.shape) + " has more than 2^30 elements");
  v.id = static_cast<int>(m_values.size());
  m_values.push_back(std::move(v));
  return m_values.back().id;
}

int Graph::add_input(const std::string& name, Shape shape, DType dtype) {
  for (int64_t d : shape)
    if (d < 1) throw Error("input '" + name + "'", "dimension < 1 in shape " + shape_str(shape));
  return add_value(Value{-1, name, std::move(shape), dtype, ValueKind::kInput, -1, nullptr});
}

int Graph::add_param(const std::string& name, Shape shape) {
  for (int64_t d : shape)
    if (d < 1) throw Error("param '" + name + "'", "dimension < 1 in shape " + shape_str(shape));
  return add_value(Value{-1, name, std::move(shape), DType::kF32, ValueKind::kParam, -1, nullptr});
}

int Graph::add_constant(const std::string& name, Shape shape, std::vector<float> data) {
  for (int64_t d : shape)
    if (d < 1) throw Error("constant '" + name + "'", "dimension < 1 in shape " + shape_str(shape));
  if (static_cast<int64_t>(data.size()) != num_elements(shape))
    throw Error("constant '" + name + "'",
                std::to_string(data.size()) + " values for shape " + shape_str(shape));
  auto values = std::make_shared<const std::vector<float>>(std::move(data));
  return add_value(
      Value{-1, name, std::move(shape), DType::kF32, ValueKind::kConst, -1, std::move(values)});
}

int Graph::add_node(OpKind op, std::vector<int> inputs, Attrs attrs, std::string name) {
  std::vector<const Value*> in;
  for (int id : inputs) {
    if (id < 0 || id >= static_cast<int>(m_values.size()))
      throw Error(std::string(op_name(op)),
                  "input value id " + std::to_string(id) + " does not exist");
    in.push_back(&m_values[id]);
  }
  InferredType t;
  try {
    t = infer_type(op, in, attrs);
  } catch (const Error& e) {
    if (name.empty()) throw;
    throw Error(e.where() + " '" + name + "'", e.why());
  }
  const int node_id = static_cast<int>(m_nodes.size());
  const int out = add_value(
      Value{-1, std::move(name), std::move(t.shape), t.dtype, ValueKind::kNode, node_id, nullptr});
  m_nodes.push_back(Node{node_id, op, std::move(inputs), out, std::move(attrs)});
  return out;
}

const Value& Graph::value(int id) const {
  TESSERA_CHECK(id >= 0 && id < static_cast<int>(m_values.size()), "value id out of range");
  return m_values[id];
}

const Node& Graph::node(int id) const {
  TESSERA_CHECK(id >= 0 && id < static_cast<int>(m_nodes.size()), "node id out of range");
  return m_nodes[id];
}

bool Graph::has_value(const std::string& name) const {
  for (const Value& v : m_values)
    if (v.name == name) return true;
  return false;
}

int Graph::find_value(const std::string& name) const {
  for (const Value& v : m_values)
    if (v.name == name) return v.id;
  throw Error("graph", "no value named '" + name + "'");
}

std::vector<int> Graph::params() const {
  std::vector<int> out;
  for (const Value& v : m_values)
    if (v.kind == ValueKind::kParam) out.push_back(v.id);
  return out;
}

std::vector<int> Graph::constants() const {
  std::vector<int> out;
  for (const Value& v : m_values)
    if (v.kind == ValueKind::kConst) out.push_back(v.id);
  return out;
}

std::vector<int> Graph::inputs() const {
  std::vector<int> out;
  for (const Value& v : m_values)
    if (v.kind == ValueKind::kInput) out.push_back(v.id);
  return out;
}

void Graph::verify() const {
  std::set<std::string> names;
  for (size_t i = 0; i < m_values.size(); ++i) {
    const Value& v = m_values[i];
    const std::string where = "verify: value %" + std::to_string(i) + " '" + v.name + "'";
    if (v.id != static_cast<int>(i)) throw Error(where, "id " + std::to_string(v.id) + " != index");
    if (!names.insert(v.name).second) throw Error(where, "duplicate name");
    const bool produced = v.kind == ValueKind::kNode;
    if (produced != (v.producer >= 0)) throw Error(where, "producer does not match the value kind");
    if ((v.kind == ValueKind::kConst) !=
        (v.data != nullptr && static_cast<int64_t>(v.data->size()) == num_elements(v.shape)))
      throw Error(where, "constant data does not match the value kind and shape");
    if (produced &&
        (v.producer >= static_cast<int>(m_nodes.size()) || m_nodes[v.producer].output != v.id))
      throw Error(where, "producer node " + std::to_string(v.producer) + " does not output it");
  }
  for (size_t i = 0; i < m_nodes.size(); ++i) {
    const Node& n = m_nodes[i];
    const std::string where =
        "verify: node " + std::to_string(i) + " (" + std::string(op_name(n.op)) + ")";
    if (n.id != static_cast<int>(i)) throw Error(where, "id != index");
    std::vector<const Value*> in;
    for (int id : n.inputs) {
      if (id < 0 || id >= n.output)
        throw Error(where, "input %" + std::to_string(id) + " is not defined before the node");
      in.push_back(&m_values[id]);
    }
    const InferredType t = infer_type(n.op, in, n.attrs);
    const Value& out = m_values[n.output];
    if (t.shape != out.shape || t.dtype != out.dtype)
      throw Error(where, "output " + type_str(out) + " differs from the inferred " +
                             std::string(dtype_name(t.dtype)) + shape_str(t.shape));
  }
}

std::string Graph::dump() const {
  std::string out;
  for (const Value& v : m_values) {
    if (v.kind == ValueKind::kNode) continue;
    out += v.kind == ValueKind::kInput   ? "input "
           : v.kind == ValueKind::kParam ? "param "
                                         : "const ";
    out += v.name + ": " + type_str(v) + "\n";
  }
  for (const Node& n : m_nodes) {
    const Value& v = m_values[n.output];
    out += v.name + ": " + type_str(v) + " = " + std::string(op_name(n.op)) + "(";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      out += (i ? ", " : "") + m_values[n.inputs[i]].name;
    out += ")";
    out += attrs_str(n.op, n.attrs);
    out += "\n";
  }
  return out;
}

}  // namespace tessera::graph
