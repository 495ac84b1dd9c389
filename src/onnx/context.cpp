#include "onnx/context.h"

#include "common/error.h"

namespace tessera::onnx_import {

using graph::OpKind;
using graph::Shape;

Shape inverse_permutation(const Shape& perm) {
  Shape inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

void Context::bind_constant(const std::string& name, Tensor t) {
  m_values.erase(name);
  m_initializers.erase(name);
  m_constants[name] = std::move(t);
}

void Context::bind_initializer(const std::string& name, Tensor t) {
  const bool trainable = !t.integer;
  bind_constant(name, std::move(t));
  if (trainable) m_initializers.insert(name);
}

bool Context::is_bound(const std::string& name) const {
  return m_values.count(name) > 0 || m_constants.count(name) > 0;
}

int Context::value_named(const std::string& name) {
  if (auto it = m_values.find(name); it != m_values.end()) return it->second;
  auto c = m_constants.find(name);
  if (c == m_constants.end()) throw Error(node_label(), "input '" + name + "' is not defined");
  if (c->second.integer)
    unsupported("integer tensor '" + name + "' used as data (integer data stays on the host)");
  const int v = m_initializers.count(name)
                    ? param(name, c->second.shape, c->second.floats())
                    : constant_value(name, c->second.shape, c->second.floats());
  m_values[name] = v;
  return v;
}

std::string Context::node_label() const {
  if (m_node == nullptr) return "graph";
  return m_node->op_type() + " node '" + m_node->name() + "'";
}

bool Context::has_input(int i) const {
  return i < m_node->input_size() && !m_node->input(i).empty();
}

bool Context::is_constant(int i) const {
  return has_input(i) && m_constants.count(m_node->input(i)) > 0;
}

const Tensor& Context::constant(int i) const {
  if (!has_input(i)) unsupported("input " + std::to_string(i) + " is missing");
  auto it = m_constants.find(m_node->input(i));
  if (it == m_constants.end())
    unsupported("input " + std::to_string(i) + " ('" + m_node->input(i) +
                "') must be a constant (an initializer or folded from constants)");
  return it->second;
}

bool Context::is_trainable(int i) const {
  return is_constant(i) && m_initializers.count(m_node->input(i)) > 0;
}

int Context::value(int i) {
  if (!has_input(i)) unsupported("input " + std::to_string(i) + " is missing");
  return value_named(m_node->input(i));
}

Shape Context::shape(int i) const {
  if (!has_input(i)) unsupported("input " + std::to_string(i) + " is missing");
  const std::string& name = m_node->input(i);
  if (auto c = m_constants.find(name); c != m_constants.end()) return c->second.shape;
  auto v = m_values.find(name);
  if (v == m_values.end()) throw Error(node_label(), "input '" + name + "' is not defined");
  return m_g.value(v->second).shape;
}

std::vector<int64_t> Context::ints(int i) const {
  const Tensor& t = constant(i);
  if (!t.integer) unsupported("input " + std::to_string(i) + " must hold integers");
  return t.i;
}

void Context::set_output(int k, int value) {
  if (k < num_outputs() && !m_node->output(k).empty()) bind_value(m_node->output(k), value);
}

void Context::set_output(int k, Tensor t) {
  if (k < num_outputs() && !m_node->output(k).empty())
    bind_constant(m_node->output(k), std::move(t));
}

const onnx::AttributeProto* Context::attr(const std::string& name) const {
  for (const auto& a : m_node->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t Context::attr_int(const std::string& name, int64_t def) const {
  const auto* a = attr(name);
  return a == nullptr ? def : a->i();
}

double Context::attr_float(const std::string& name, double def) const {
  const auto* a = attr(name);
  return a == nullptr ? def : a->f();
}

std::string Context::attr_string(const std::string& name, const std::string& def) const {
  const auto* a = attr(name);
  return a == nullptr ? def : a->s();
}

std::vector<int64_t> Context::attr_ints(const std::string& name, std::vector<int64_t> def) const {
  const auto* a = attr(name);
  return a == nullptr ? def : std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

const onnx::TensorProto* Context::attr_tensor(const std::string& name) const {
  const auto* a = attr(name);
  return a == nullptr || !a->has_t() ? nullptr : &a->t();
}

int64_t Context::axis(int64_t a, int64_t rank) const {
  const int64_t r = a < 0 ? a + rank : a;
  if (r < 0 || r >= std::max<int64_t>(rank, 1))
    unsupported("axis " + std::to_string(a) + " is outside rank " + std::to_string(rank));
  return r;
}

int Context::emit(OpKind op, std::vector<int> inputs, graph::Attrs attrs) {
  try {
    return m_g.add_node(op, std::move(inputs), std::move(attrs));
  } catch (const Unsupported&) {
    throw;
  } catch (const Error& e) {
    unsupported(e.what());
  }
}

int Context::permute(int v, const Shape& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return v;
  const graph::Value& x = m_g.value(v);
  if (x.producer >= 0 && m_g.node(x.producer).op == OpKind::kPermute) {
    const graph::Node& p =
        m_g.node(x.producer);  // permute(permute(y, q), perm) = permute(y, q∘perm)
    Shape composed(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      composed[i] = p.attrs.perm[static_cast<size_t>(perm[i])];
    return permute(p.inputs[0], composed);
  }
  int64_t last = -1;  // moving only dims of size 1 keeps the elements' order: a reshape
  bool order_kept = true;
  Shape out;
  for (int64_t d : perm) {
    out.push_back(x.shape[static_cast<size_t>(d)]);
    if (out.back() == 1) continue;
    order_kept = order_kept && d > last;
    last = d;
  }
  if (order_kept) return reshape(v, out);
  return emit(OpKind::kPermute, {v}, graph::Attrs::permute(perm));
}

int Context::reshape(int v, const Shape& shape) {
  const graph::Value& x = m_g.value(v);
  if (x.shape == shape) return v;
  if (x.producer >= 0 && m_g.node(x.producer).op == OpKind::kReshape)
    return reshape(m_g.node(x.producer).inputs[0], shape);
  return emit(OpKind::kReshape, {v}, graph::Attrs::reshape(shape));
}

int Context::scale(int v, double factor) {
  return factor == 1.0 ? v : elementwise(OpKind::kScale, v, graph::Attrs::scaled(factor));
}

int Context::elementwise(OpKind op, int v, graph::Attrs attrs) {
  const graph::Value& x = m_g.value(v);
  if (x.producer >= 0 && m_g.node(x.producer).op == OpKind::kPermute) {
    const graph::Node p = m_g.node(x.producer);
    return permute(emit(op, {p.inputs[0]}, std::move(attrs)), p.attrs.perm);
  }
  return emit(op, {v}, std::move(attrs));
}

std::string Context::unique_name(const std::string& name) const {
  std::string unique = name;
  for (int k = 1; m_g.has_value(unique); ++k) unique = name + "." + std::to_string(k);
  return unique;
}

int Context::param(const std::string& name, const Shape& shape, std::vector<float> data) {
  const int v = m_g.add_param(unique_name(name), shape);
  m_params.push_back(std::move(data));
  return v;
}

int Context::constant_value(const std::string& name, const Shape& shape, std::vector<float> data) {
  return m_g.add_constant(unique_name(name), shape, std::move(data));
}

int Context::derived(int i, const std::string& name, const Tensor& t, bool trainable) {
  return trainable && is_trainable(i) ? param(name, t.shape, t.floats())
                                      : constant_value(name, t.shape, t.floats());
}

int Context::state_input(int i) {
  if (!is_trainable(i))
    unsupported("input " + std::to_string(i) + " must be a float initializer to be kept as state");
  const std::string& name = m_node->input(i);
  for (const StateValue& s : m_state)
    if (s.name == name) return s.value;
  const Tensor& t = constant(i);
  const int v = m_g.add_input(unique_name(name), t.shape);
  m_state.push_back({name, v, -1, t.floats()});
  return v;
}

void Context::set_state_update(int state, int update) {
  for (StateValue& s : m_state)
    if (s.value == state) {
      if (s.update >= 0) unsupported("state '" + s.name + "' is updated twice");
      s.update = update;
      return;
    }
  throw Error(node_label(), "no state value " + std::to_string(state));
}

void Context::unsupported(const std::string& why) const {
  throw Unsupported(node_label(), why);
}

}  // namespace tessera::onnx_import
