#include "onnx/importer.h"

#include <map>
#include <set>

#include "common/error.h"
#include "onnx/context.h"
#include "onnx/op_table.h"

namespace tessera::onnx_import {

namespace {

bool default_domain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

std::string node_id(const onnx::NodeProto& n) {
  return (default_domain(n) ? "" : n.domain() + ".") + n.op_type() + " '" + n.name() + "'";
}

void check_op_types(const ModelFile& f) {
  std::vector<std::string> missing;
  for (const auto& n : f.proto.graph().node())
    if (!default_domain(n) || op_table().count(n.op_type()) == 0) missing.push_back(node_id(n));
  if (missing.empty()) return;
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
  throw Error(f.path, "opset " + std::to_string(f.opset) + ": " + std::to_string(missing.size()) +
                          " node(s) with unsupported op types: " + list);
}

graph::Shape input_shape(const onnx::ValueInfoProto& in, const ImportOptions& o,
                         const std::string& where) {
  const auto& type = in.type().tensor_type();
  graph::Shape shape;
  for (const auto& d : type.shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  auto bound = o.input_shapes.find(in.name());
  if (bound != o.input_shapes.end()) {
    const graph::Shape& b = bound->second;
    bool agrees = !type.has_shape() || b.size() == shape.size();
    for (size_t k = 0; agrees && k < shape.size(); ++k) agrees = shape[k] < 0 || shape[k] == b[k];
    if (!agrees)
      throw Error(where, "--input-shape " + in.name() + "=" + graph::shape_str(b) +
                             " contradicts the graph's " + graph::shape_str(shape) +
                             " (-1: symbolic)");
    return b;
  }
  for (size_t k = 0; k < shape.size(); ++k)
    if (shape[k] < 0) {
      const auto& d = type.shape().dim(static_cast<int>(k));
      throw Error(where, "dimension " + std::to_string(k) + " ('" + d.dim_param() +
                             "') is symbolic: bind it with --input-shape " + in.name() + "=...");
    }
  if (!type.has_shape()) throw Error(where, "has no shape: give it with --input-shape");
  return shape;
}

void add_inputs(const ModelFile& f, const ImportOptions& o, Context& c, ImportedModel& m) {
  std::set<std::string> initializers;
  for (const auto& t : f.proto.graph().initializer()) initializers.insert(t.name());
  // Shapes given for names that are not inputs are refused before any input is read, so the error
  // names the misspelt input rather than the unbound one it was meant for.
  std::string input_names;
  std::set<std::string> inputs;
  for (const auto& in : f.proto.graph().input())
    if (!initializers.count(in.name()) && inputs.insert(in.name()).second)
      input_names += (input_names.empty() ? "" : ", ") + in.name();
  for (const auto& [name, shape] : o.input_shapes)
    if (!inputs.count(name))
      throw Error(f.path, "'" + name + "' (given with --input or --input-shape) is not a graph " +
                              "input; the inputs: " + (input_names.empty() ? "none" : input_names));
  for (const auto& in : f.proto.graph().input()) {
    if (initializers.count(in.name())) continue;
    if (auto k = o.constant_inputs.find(in.name()); k != o.constant_inputs.end()) {
      c.bind_constant(in.name(), k->second);
      continue;
    }
    const std::string where = f.path + ": input '" + in.name() + "'";
    const int32_t elem = in.type().tensor_type().elem_type();
    if (!in.type().has_tensor_type() || (!is_float_type(elem) && !is_integer_type(elem)))
      throw Error(where,
                  "type " + elem_type_name(elem) + " is not supported (float or integer tensors)");
    const graph::Shape shape = input_shape(in, o, where);
    const int v = c.graph().add_input(
        in.name(), shape, is_float_type(elem) ? graph::DType::kF32 : graph::DType::kI32);
    c.bind_value(in.name(), v);
    m.inputs.push_back({in.name(), v, elem});
  }
  for (const auto& [name, t] : o.constant_inputs)
    if (!c.is_bound(name))
      throw Error(f.path, "constant input '" + name + "' is not a graph input");
}

// The graph without the nodes no output depends on (permutes that cancelled, values folded
// around), and without the parameters they alone read. Inputs all stay: the caller binds them.
// A node value bound to an ONNX name takes that name (the first, in name order).
void prune(ImportedModel& m, const std::map<std::string, int>& onnx_names) {
  std::map<int, std::string> label;
  for (const auto& [name, v] : onnx_names) label.emplace(v, name);
  const graph::Graph& g = m.graph;
  std::vector<bool> live(g.values().size(), false);
  for (const auto& o : m.outputs)
    if (o.value >= 0) live[o.value] = true;
  for (const StateValue& s : m.state)
    if (s.update >= 0) live[s.update] = true;
  for (size_t i = g.nodes().size(); i-- > 0;) {
    const graph::Node& n = g.nodes()[i];
    if (live[n.output])
      for (int in : n.inputs) live[in] = true;
  }
  graph::Graph out;
  std::vector<int> id(g.values().size(), -1);
  std::vector<std::vector<float>> params;
  size_t param_index = 0;
  for (const graph::Value& v : g.values()) {
    if (v.kind == graph::ValueKind::kInput) {
      id[v.id] = out.add_input(v.name, v.shape, v.dtype);
    } else if (v.kind == graph::ValueKind::kParam) {
      if (live[v.id]) {
        id[v.id] = out.add_param(v.name, v.shape);
        params.push_back(std::move(m.params[param_index]));
      }
      ++param_index;
    } else if (v.kind == graph::ValueKind::kConst) {
      if (live[v.id]) id[v.id] = out.add_constant(v.name, v.shape, *v.data);
    } else if (live[v.id]) {
      const graph::Node& n = g.node(v.producer);
      std::vector<int> inputs;
      for (int in : n.inputs) inputs.push_back(id[in]);
      const auto l = label.find(v.id);
      const bool rename = l != label.end() && !g.has_value(l->second) && !out.has_value(l->second);
      id[v.id] = out.add_node(n.op, inputs, n.attrs,
                              rename ? l->second : (v.name.starts_with('%') ? "" : v.name));
    }
  }
  for (auto& in : m.inputs) in.value = id[in.value];
  for (StateValue& s : m.state) {
    s.value = id[s.value];
    if (s.update >= 0) s.update = id[s.update];
  }
  for (auto& o : m.outputs)
    if (o.value >= 0) o.value = id[o.value];
  m.graph = std::move(out);
  m.params = std::move(params);
}

bool all_inputs_constant(const Context& c) {
  for (int i = 0; i < c.node().input_size(); ++i)
    if (c.has_input(i) && !c.is_constant(i)) return false;
  return true;
}

}  // namespace

std::pair<std::string, graph::Shape> parse_input_shape(const std::string& flag) {
  const size_t eq = flag.rfind('=');
  auto bad = [&] {
    throw UsageError("--input-shape", "'" + flag + "' is not NAME=D1xD2x... with dims >= 1");
  };
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) bad();
  graph::Shape shape;
  size_t at = eq + 1;
  while (at <= flag.size()) {
    const size_t x = std::min(flag.find('x', at), flag.size());
    const std::string dim = flag.substr(at, x - at);
    if (dim.empty() || dim.size() > 9 || dim.find_first_not_of("0123456789") != std::string::npos)
      bad();
    shape.push_back(std::stoll(dim));
    if (shape.back() < 1) bad();
    at = x + 1;
  }
  return {flag.substr(0, eq), shape};
}

ImportedModel import_model(const ModelFile& f, const ImportOptions& o) {
  check_op_types(f);
  ImportedModel m;
  m.name = f.proto.graph().name();
  m.opset = f.opset;
  Context c(m.graph, f.opset);
  c.set_batch_norm(o.batch_norm);
  add_inputs(f, o, c, m);
  for (const auto& t : f.proto.graph().initializer())
    c.bind_initializer(t.name(), from_proto(t, f.path + ": initializer '" + t.name() + "'"));
  std::set<std::string> poisoned;
  std::vector<std::string> failures;
  for (const auto& n : f.proto.graph().node()) {
    c.begin(n);
    bool skip = false;
    for (const std::string& in : n.input()) {
      skip = skip || poisoned.count(in) > 0;
      if (!in.empty() && !skip && !c.is_bound(in))
        throw Error(f.path, c.node_label() + ": input '" + in + "' is not defined before it");
    }
    const OpRow& row = op_table().at(n.op_type());
    try {
      if (!skip && !(row.fold && all_inputs_constant(c) && row.fold(c))) row.convert(c);
    } catch (const Unsupported& e) {
      failures.push_back(e.what());
      skip = true;
    } catch (const Error& e) {
      throw Error(f.path, c.node_label() + ": " + e.what());
    }
    if (skip)
      for (const std::string& out : n.output()) poisoned.insert(out);
  }
  if (!failures.empty()) {
    std::string list;
    for (const std::string& s : failures) list += "\n  " + s;
    throw Error(f.path, "opset " + std::to_string(f.opset) + ": " +
                            std::to_string(failures.size()) +
                            " node(s) cannot be converted:" + list);
  }
  for (const auto& out : f.proto.graph().output()) {
    if (!c.is_bound(out.name()))
      throw Error(f.path, "output '" + out.name() + "' is never computed");
    if (c.is_constant_name(out.name()))
      m.outputs.push_back({out.name(), -1, c.constant_named(out.name())});
    else if (m.graph.value(c.value_named(out.name())).dtype != graph::DType::kF32)
      throw Error(f.path, "output '" + out.name() +
                              "' is an integer graph value (integer data stays on the host)");
    else
      m.outputs.push_back({out.name(), c.value_named(out.name()), {}});
  }
  m.params = c.params();
  m.state = c.state();
  prune(m, c.value_names());
  m.graph.verify();
  return m;
}

}  // namespace tessera::onnx_import
