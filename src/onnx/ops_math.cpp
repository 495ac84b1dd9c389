// Converters of the ONNX arithmetic ops: Add, Sub, Mul, Div, Neg, Pow, Relu, Clip, Where, the
// elementwise math ops (Exp, Log, Sqrt, Reciprocal, Sigmoid, Tanh, Erf), MatMul, Gemm, Softmax,
// LogSoftmax, ReduceSum, ReduceMean, ReduceMax. Broadcasting maps onto the graph's suffix broadcast
// (add, mul: b's shape a suffix of a's) after dropping b's leading ones or swapping commutative
// operands, else onto explicit broadcast nodes; Sub and Div become add and mul of a negated or
// inverted operand. On constants the elementwise ops fold.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "onnx/fold.h"
#include "onnx/op_table.h"
#include "onnx/permuted_rows.h"

namespace tessera::onnx_import {

namespace {

using graph::OpKind;
using graph::Shape;

Shape drop_leading_ones(Shape s) {
  while (!s.empty() && s.front() == 1) s.erase(s.begin());
  return s;
}

bool is_suffix(const Shape& small, const Shape& big) {
  return small.size() <= big.size() &&
         std::equal(small.begin(), small.end(), big.end() - static_cast<long>(small.size()));
}

// op(a, b) with numpy broadcasting, for a graph op whose b broadcasts as a suffix of a.
int broadcast_binary(Context& c, OpKind op, int a, int b, bool commutative) {
  const Shape sa = c.graph().value(a).shape, sb = c.graph().value(b).shape;
  Shape out;
  try {
    out = fold::broadcast_shapes(sa, sb);
  } catch (const Error& e) {
    c.unsupported(e.why());
  }
  int result = -1;
  if (graph::num_elements(sa) == graph::num_elements(out) && is_suffix(drop_leading_ones(sb), sa)) {
    result = c.emit(op, {c.reshape(a, sa), c.reshape(b, drop_leading_ones(sb))});
  } else if (commutative && graph::num_elements(sb) == graph::num_elements(out) &&
             is_suffix(drop_leading_ones(sa), sb)) {
    result = c.emit(op, {b, c.reshape(a, drop_leading_ones(sa))});
  } else {
    auto full = [&](int v, const Shape& s) {
      return s == out ? v : c.emit(OpKind::kBroadcast, {v}, graph::Attrs::reshape(out));
    };
    result = c.emit(op, {full(a, sa), full(b, sb)});
  }
  return c.reshape(result, out);
}

bool fold_binary(Context& c, double (*op)(double, double)) {
  const Tensor& a = c.constant(0);
  const Tensor& b = c.constant(1);
  c.set_output(0, fold::binary(a, b, op));
  return true;
}

double add(double x, double y) {
  return x + y;
}
double sub(double x, double y) {
  return x - y;
}
double mul(double x, double y) {
  return x * y;
}
double div(double x, double y) {
  return y == 0 ? 0 : x / y;
}
double neg(double x) {
  return -x;
}
double inv(double x) {
  return 1.0 / x;
}

// A float operand: input i, negated or inverted on the host when it is a constant. A trainable
// initializer stays a parameter as itself or negated; inverted (a divisor) it is a constant.
int operand(Context& c, int i, double (*transform)(double)) {
  if (!c.is_constant(i)) return -1;
  Tensor t = fold::cast(c.constant(i), false);
  if (transform != nullptr) t = fold::unary(t, transform);
  return c.derived(i, c.node().input(i) + (transform == nullptr ? "" : ".folded"), t,
                   transform != inv);
}

bool fold_add(Context& c) {
  return fold_binary(c, add);
}
bool fold_sub(Context& c) {
  return fold_binary(c, sub);
}
bool fold_mul(Context& c) {
  return fold_binary(c, mul);
}
bool fold_div(Context& c) {
  if (c.constant(0).integer && c.constant(1).integer) {  // integer division truncates
    c.set_output(0, fold::binary(c.constant(0), c.constant(1), [](double x, double y) {
                   return y == 0 ? 0 : std::trunc(x / y);
                 }));
    return true;
  }
  return fold_binary(c, div);
}
bool fold_neg(Context& c) {
  c.set_output(0, fold::unary(c.constant(0), neg));
  return true;
}

void convert_add(Context& c) {
  c.set_output(0, broadcast_binary(c, OpKind::kAdd, c.value(0), c.value(1), true));
}

void convert_mul(Context& c) {
  c.set_output(0, broadcast_binary(c, OpKind::kMul, c.value(0), c.value(1), true));
}

void convert_sub(Context& c) {
  const int b = c.is_constant(1) ? operand(c, 1, neg) : c.scale(c.value(1), -1.0);
  c.set_output(0, broadcast_binary(c, OpKind::kAdd, c.value(0), b, true));
}

void convert_div(Context& c) {
  const int inverse =
      c.is_constant(1) ? operand(c, 1, inv) : c.elementwise(OpKind::kReciprocal, c.value(1));
  c.set_output(0, broadcast_binary(c, OpKind::kMul, c.value(0), inverse, true));
}

// x ^ p = exp(p * log(x)) (NaN for x < 0, as for a non-integer p).
int pow_by_log(Context& c, int x, int p) {
  return c.elementwise(OpKind::kExp,
                       broadcast_binary(c, OpKind::kMul, c.elementwise(OpKind::kLog, x), p, true));
}

// x ^ p: for a constant scalar p in {-1, -0.5, 0.5, 1, 2, 3} (the exponents models use) mul,
// sqrt and reciprocal; else exp(p * log(x)), which takes positive x only.
void convert_pow(Context& c) {
  const int x = c.value(0);
  if (!c.is_constant(1) || c.constant(1).size() != 1) {
    c.set_output(0, pow_by_log(c, x, c.is_constant(1) ? operand(c, 1, nullptr) : c.value(1)));
    return;
  }
  const double e = c.constant(1).at(0);
  int y = -1;
  if (e == 1) y = x;
  if (e == 2 || e == 3) y = c.emit(OpKind::kMul, {x, x});
  if (e == 3) y = c.emit(OpKind::kMul, {y, x});
  if (e == 0.5 || e == -0.5) y = c.elementwise(OpKind::kSqrt, x);
  if (e == -0.5) y = c.elementwise(OpKind::kReciprocal, y);
  if (e == -1) y = c.elementwise(OpKind::kReciprocal, x);
  if (y < 0) y = pow_by_log(c, x, operand(c, 1, nullptr));
  c.set_output(0, y);
}

bool fold_pow(Context& c) {
  c.set_output(0, fold::binary(fold::cast(c.constant(0), false), c.constant(1),
                               [](double x, double y) { return std::pow(x, y); }));
  return true;
}

// The graph op and the host function of each elementwise math op.
struct UnaryOp {
  OpKind op;
  double (*f)(double);
};

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

UnaryOp unary_op(const std::string& type) {
  static const std::map<std::string, UnaryOp> ops = {
      {"Exp", {OpKind::kExp, [](double x) { return std::exp(x); }}},
      {"Log", {OpKind::kLog, [](double x) { return std::log(x); }}},
      {"Sqrt", {OpKind::kSqrt, [](double x) { return std::sqrt(x); }}},
      {"Reciprocal", {OpKind::kReciprocal, inv}},
      {"Sigmoid", {OpKind::kSigmoid, sigmoid}},
      {"Tanh", {OpKind::kTanh, [](double x) { return std::tanh(x); }}},
      {"Erf", {OpKind::kErf, [](double x) { return std::erf(x); }}}};
  return ops.at(type);
}

void convert_unary(Context& c) {
  c.set_output(0, c.elementwise(unary_op(c.node().op_type()).op, c.value(0)));
}

bool fold_unary(Context& c) {
  c.set_output(0, fold::unary(fold::cast(c.constant(0), false), unary_op(c.node().op_type()).f));
  return true;
}

void convert_neg(Context& c) {
  c.set_output(0, c.scale(c.value(0), -1.0));
}

void convert_relu(Context& c) {
  c.set_output(0, c.elementwise(OpKind::kRelu, c.value(0)));
}

// a[..., M, K] x b[K, N] or b[..., K, N] with equal leading dims; rank-1 operands promoted.
int matmul(Context& c, int a, int b) {
  Shape sa = c.graph().value(a).shape, sb = c.graph().value(b).shape;
  if (sa.empty() || sb.empty()) c.unsupported("matmul of a scalar");
  const bool vec_a = sa.size() == 1, vec_b = sb.size() == 1;
  if (vec_a) a = c.reshape(a, sa = {1, sa[0]});
  if (vec_b) b = c.reshape(b, sb = {sb[0], 1});
  Shape out;
  int y = -1;
  if (drop_leading_ones(Shape(sb.begin(), sb.end() - 2)).empty()) {  // b is one matrix
    const int64_t k = sa.back(), n = sb.back();
    const int64_t rows = graph::num_elements(sa) / k;
    out = sa;
    out.back() = n;
    y = c.emit(OpKind::kMatMul, {c.reshape(a, {rows, k}), c.reshape(b, {sb[sb.size() - 2], n})});
  } else if (sa.size() == sb.size() && std::equal(sa.begin(), sa.end() - 2, sb.begin())) {
    y = c.emit(OpKind::kBatchMatMul, {a, b});
    out = c.graph().value(y).shape;
  } else {
    c.unsupported("batched matmul of " + graph::shape_str(sa) + " and " + graph::shape_str(sb) +
                  " (supported: equal batch dimensions, or one matrix on the right)");
  }
  if (vec_a) out.erase(out.end() - 2);
  if (vec_b) out.pop_back();
  return c.reshape(y, out);
}

void convert_matmul(Context& c) {
  c.set_output(0, matmul(c, c.value(0), c.value(1)));
}

// A 2-D operand, transposed when `trans` (folded on the host for a constant).
int gemm_operand(Context& c, int i, bool trans) {
  if (c.shape(i).size() != 2)
    c.unsupported("Gemm operands must be 2-D, got " + graph::shape_str(c.shape(i)));
  if (!trans) return c.value(i);
  if (c.is_constant(i)) {
    return c.derived(i, c.node().input(i), fold::transpose(c.constant(i), {1, 0}));
  }
  return c.emit(OpKind::kTranspose, {c.value(i)});
}

void convert_gemm(Context& c) {
  int a = gemm_operand(c, 0, c.attr_int("transA", 0) != 0);
  int b = -1;
  if (c.is_constant(1) && c.shape(1).size() == 2) {  // A a flattened permute: B's rows reordered
    Tensor t = c.attr_int("transB", 0) != 0 ? fold::transpose(c.constant(1), {1, 0})
                                            : fold::cast(c.constant(1), false);
    if (const int y = unpermuted_rows(c, a, t); y >= 0) {
      a = y;
      b = c.derived(1, c.node().input(1), t);
    }
  }
  if (b < 0) b = gemm_operand(c, 1, c.attr_int("transB", 0) != 0);
  int y = c.scale(c.emit(OpKind::kMatMul, {a, b}), c.attr_float("alpha", 1.0));
  if (c.has_input(2)) {
    const double beta = c.attr_float("beta", 1.0);
    int bias = -1;
    if (c.is_constant(2)) {
      const Tensor t =
          fold::unary(c.constant(2), [beta](double v) { return v * static_cast<float>(beta); });
      bias = c.derived(2, c.node().input(2), t);
    } else {
      bias = c.scale(c.value(2), beta);
    }
    y = broadcast_binary(c, OpKind::kAdd, y, bias, true);
  }
  c.set_output(0, y);
}

// Softmax over `axis` (opset >= 13) or over the 2-D coercion at `axis` (opset < 13).
int softmax(Context& c, int x) {
  const Shape s = c.graph().value(x).shape;
  const auto rank = static_cast<int64_t>(s.size());
  if (c.opset() < 13) {
    const int64_t axis = c.axis(c.attr_int("axis", 1), rank);
    const int64_t outer = graph::num_elements(Shape(s.begin(), s.begin() + axis));
    const int y = c.emit(OpKind::kSoftmax, {c.reshape(x, {outer, graph::num_elements(s) / outer})});
    return c.reshape(y, s);
  }
  const int64_t axis = c.axis(c.attr_int("axis", -1), rank);
  Shape perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  const Shape inverse = inverse_permutation(perm);
  return c.permute(c.emit(OpKind::kSoftmax, {c.permute(x, perm)}), inverse);
}

void convert_softmax(Context& c) {
  c.set_output(0, softmax(c, c.value(0)));
}

void convert_log_softmax(Context& c) {
  c.set_output(0, c.elementwise(OpKind::kLog, softmax(c, c.value(0))));
}

// ReduceSum, ReduceMean and ReduceMax over `axes` (all when empty, unless noop_with_empty_axes):
// sum_to (reduce_max) the shape with those dims 1, then drop them unless keepdims; the mean
// scales by 1/count.
void convert_reduce(Context& c) {
  const int x = c.value(0);
  const Shape in = c.graph().value(x).shape;
  const bool axes_input = c.node().op_type() == "ReduceSum" && c.opset() >= 13;
  std::vector<int64_t> axes =
      axes_input ? (c.has_input(1) ? c.ints(1) : std::vector<int64_t>{}) : c.attr_ints("axes");
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0) != 0) {
    c.set_output(0, x);
    return;
  }
  if (axes.empty())
    for (size_t d = 0; d < in.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  Shape kept = in, dropped;
  int64_t count = 1;
  for (int64_t& a : axes) {
    a = c.axis(a, static_cast<int64_t>(in.size()));
    count *= kept[static_cast<size_t>(a)];
    kept[static_cast<size_t>(a)] = 1;
  }
  for (size_t d = 0; d < in.size(); ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end())
      dropped.push_back(in[d]);
  const OpKind op = c.node().op_type() == "ReduceMax" ? OpKind::kReduceMax : OpKind::kSumTo;
  int y = kept == in ? x : c.emit(op, {x}, graph::Attrs::reshape(kept));
  if (c.node().op_type() == "ReduceMean") y = c.scale(y, 1.0 / static_cast<double>(count));
  c.set_output(0, c.reshape(y, c.attr_int("keepdims", 1) != 0 ? kept : dropped));
}

// max(x, v), or with `upper` min(x, v) = -max(-x, -v), for v a graph value of one element: x
// stacked with v (broadcast) along a new first axis, then reduce_max over that axis (exact, and
// the gradient goes to x where x is kept, else to v).
int clip_bound(Context& c, int x, int v, bool upper) {
  const Shape s = c.graph().value(x).shape;
  Shape stacked{1};
  stacked.insert(stacked.end(), s.begin(), s.end());
  const double sign = upper ? -1 : 1;
  const int pair =
      c.emit(OpKind::kConcat,
             {c.reshape(c.scale(x, sign), stacked),
              c.emit(OpKind::kBroadcast, {c.reshape(v, {1})}, graph::Attrs::reshape(stacked))},
             graph::Attrs::concat(0));
  const int m = c.emit(OpKind::kReduceMax, {pair}, graph::Attrs::reshape(stacked));
  return c.scale(c.reshape(m, s), sign);
}

// Clip's bounds: inputs 1 and 2 (opset >= 11) or attributes min and max; absent: none. Constant
// bounds are returned as values; `value` is set for a bound that is a graph value.
struct ClipBound {
  std::optional<double> constant;
  int value = -1;
};
std::pair<ClipBound, ClipBound> clip_bounds(Context& c) {
  auto bound = [&](int i, const char* attr) {
    ClipBound b;
    if (c.opset() < 11) {
      if (c.has_attr(attr)) b.constant = c.attr_float(attr, 0);
    } else if (c.has_input(i)) {
      if (graph::num_elements(c.shape(i)) != 1)
        c.unsupported(std::string(attr) + " " + graph::shape_str(c.shape(i)) + " is not a scalar");
      if (c.is_constant(i))
        b.constant = c.constant(i).at(0);
      else
        b.value = c.value(i);
    }
    return b;
  };
  return {bound(1, "min"), bound(2, "max")};
}

// Clip: a constant lower bound 0 is relu; other bounds clip_bound (a constant enters as a
// graph constant of its value, negated for the upper bound).
void convert_clip(Context& c) {
  const auto [lo, hi] = clip_bounds(c);
  int y = c.value(0);
  auto apply = [&](const ClipBound& b, bool upper) {
    if (b.constant && *b.constant == 0.0 && !upper) return c.elementwise(OpKind::kRelu, y);
    int v = b.value;
    if (b.constant)
      v = c.constant_value(c.node().output(0) + (upper ? ".max" : ".min"), {1},
                           {static_cast<float>((upper ? -1 : 1) * *b.constant)});
    else if (upper)
      v = c.scale(v, -1.0);
    return clip_bound(c, y, v, upper);
  };
  if (lo.constant || lo.value >= 0) y = apply(lo, false);
  if (hi.constant || hi.value >= 0) y = apply(hi, true);
  c.set_output(0, y);
}

bool fold_clip(Context& c) {
  const auto [lo, hi] = clip_bounds(c);
  c.set_output(0, fold::unary(c.constant(0), [lo = lo.constant, hi = hi.constant](double x) {
                 if (lo) x = std::max(x, *lo);
                 return hi ? std::min(x, *hi) : x;
               }));
  return true;
}

// Where(cond, a, b) with a condition that is a graph value (a bool input, i32 in the graph): a 0/1
// mask as the rows of a 2 x 1 table embedded by cond, a * mask_then + b * mask_else; a constant
// scalar operand enters as its own embedded table (its value where it is chosen, 0 elsewhere), so
// that an infinite fill stays exact. Other constant operands are Unsupported.
void convert_where_value(Context& c, const Shape& out) {
  const int cond = c.value(0);
  const Shape cs = c.graph().value(cond).shape;
  auto table = [&](const std::string& suffix, float zero, float one) {
    const int t = c.constant_value(c.node().output(0) + suffix, {2, 1}, {zero, one});
    return c.reshape(c.emit(OpKind::kEmbedding, {t, cond}), cs);
  };
  auto part = [&](int i, bool when) {
    const std::string suffix = when ? ".then" : ".else";
    if (c.is_constant(i)) {
      if (c.constant(i).size() != 1)
        c.unsupported("a constant operand " + graph::shape_str(c.shape(i)) +
                      " with a condition that is not a constant (scalars only)");
      const auto v = static_cast<float>(fold::cast(c.constant(i), false).at(0));
      return table(suffix, when ? 0.0f : v, when ? v : 0.0f);
    }
    return broadcast_binary(c, OpKind::kMul, c.value(i),
                            table(suffix + "_mask", when ? 0.0f : 1.0f, when ? 1.0f : 0.0f), true);
  };
  const int y = broadcast_binary(c, OpKind::kAdd, part(1, true), part(2, false), true);
  c.set_output(0, c.graph().value(y).shape == out
                      ? y
                      : c.emit(OpKind::kBroadcast, {y}, graph::Attrs::reshape(out)));
}

// Where(cond, a, b) for a constant cond: a * m + b * (1 - m) with m = cond as 0 / 1; a constant
// operand enters as its masked values only (so that an infinite fill stays exact). A cond that is
// a graph value: convert_where_value.
void convert_where(Context& c) {
  Shape out;
  try {
    out = fold::broadcast_shapes(fold::broadcast_shapes(c.shape(0), c.shape(1)), c.shape(2));
  } catch (const Error& e) {
    c.unsupported(e.why());
  }
  if (!c.is_constant(0)) {
    convert_where_value(c, out);
    return;
  }
  fold::check_fold_size(out);
  const Tensor cond = fold::expand(c.constant(0), out);
  const std::string& name = c.node().output(0);
  auto masked = [&](int i, bool when) {  // the operand where cond == when, 0 elsewhere
    if (c.is_constant(i)) {
      const Tensor v = fold::expand(fold::cast(c.constant(i), false), out);
      std::vector<float> data(static_cast<size_t>(v.size()));
      for (int64_t k = 0; k < v.size(); ++k)
        data[static_cast<size_t>(k)] = (cond.at(k) != 0) == when ? static_cast<float>(v.at(k)) : 0;
      return c.constant_value(name + (i == 1 ? ".then" : ".else"), out, std::move(data));
    }
    std::vector<float> mask(static_cast<size_t>(cond.size()));
    for (int64_t k = 0; k < cond.size(); ++k)
      mask[static_cast<size_t>(k)] = (cond.at(k) != 0) == when ? 1.0f : 0.0f;
    return broadcast_binary(
        c, OpKind::kMul, c.value(i),
        c.constant_value(name + (i == 1 ? ".then_mask" : ".else_mask"), out, mask), true);
  };
  c.set_output(0, broadcast_binary(c, OpKind::kAdd, masked(1, true), masked(2, false), true));
}

bool fold_where(Context& c) {
  const Shape out = fold::broadcast_shapes(
      fold::broadcast_shapes(c.constant(0).shape, c.constant(1).shape), c.constant(2).shape);
  fold::check_fold_size(out);
  const Tensor cond = fold::expand(c.constant(0), out);
  const Tensor a = fold::expand(c.constant(1), out), b = fold::expand(c.constant(2), out);
  Tensor y = a;
  for (int64_t k = 0; k < y.size(); ++k) {
    if (cond.at(k) != 0) continue;
    if (y.integer)
      y.i[static_cast<size_t>(k)] = b.index(k);
    else
      y.f[static_cast<size_t>(k)] = b.at(k);
  }
  c.set_output(0, std::move(y));
  return true;
}

}  // namespace

void add_math_ops(OpTable& t) {
  t["Clip"] = {convert_clip, fold_clip};
  t["Where"] = {convert_where, fold_where};
  t["ReduceMax"] = {convert_reduce, nullptr};
  t["Add"] = {convert_add, fold_add};
  t["Sub"] = {convert_sub, fold_sub};
  t["Mul"] = {convert_mul, fold_mul};
  t["Div"] = {convert_div, fold_div};
  t["Neg"] = {convert_neg, fold_neg};
  t["Pow"] = {convert_pow, fold_pow};
  for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Sigmoid", "Tanh", "Erf"})
    t[op] = {convert_unary, fold_unary};
  t["LogSoftmax"] = {convert_log_softmax, nullptr};
  t["ReduceSum"] = {convert_reduce, nullptr};
  t["ReduceMean"] = {convert_reduce, nullptr};
  t["Relu"] = {convert_relu, nullptr};
  t["MatMul"] = {convert_matmul, nullptr};
  t["Gemm"] = {convert_gemm, nullptr};
  t["Softmax"] = {convert_softmax, nullptr};
}

}  // namespace tessera::onnx_import
