// Converters of the ONNX data-movement and shape ops: Identity, Dropout, Cast, Constant,
// ConstantOfShape, Shape, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Gather,
// Slice, Expand, Range, Pad. On constants they fold on the host (fold.h); on graph values they map
// to reshape, permute, select, slice, concat, broadcast, embedding and pad.
#include <algorithm>
#include <limits>

#include "onnx/fold.h"
#include "onnx/op_table.h"

namespace tessera::onnx_import {

namespace {

using graph::OpKind;
using graph::Shape;

// --- helpers

// The ints of an attribute (opset < `from`) or of a constant input (opset >= `from`); `def`
// when neither is given.
std::vector<int64_t> ints_attr_or_input(Context& c, const std::string& attr, int input,
                                        int64_t from, std::vector<int64_t> def = {}) {
  if (c.opset() < from) return c.attr_ints(attr, std::move(def));
  return c.has_input(input) ? c.ints(input) : def;
}

// Normalized, sorted axes of a rank-`rank` tensor.
std::vector<int64_t> norm_axes(Context& c, std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) a = c.axis(a, rank);
  std::sort(axes.begin(), axes.end());
  return axes;
}

// Binds output 0 to input 0 reshaped to `shape` (constant or value).
void reshape_to(Context& c, const Shape& shape) {
  if (graph::num_elements(shape) != graph::num_elements(c.shape(0)))
    c.unsupported("cannot reshape " + graph::shape_str(c.shape(0)) + " to " +
                  graph::shape_str(shape));
  if (c.is_constant(0))
    c.set_output(0, fold::reshape(c.constant(0), shape));
  else
    c.set_output(0, c.reshape(c.value(0), shape));
}

void pass_through(Context& c) {
  if (c.is_constant(0))
    c.set_output(0, c.constant(0));
  else
    c.set_output(0, c.value(0));
}

Tensor int_tensor(const Shape& shape, std::vector<int64_t> values) {
  Tensor t;
  t.shape = shape;
  t.integer = true;
  t.i = std::move(values);
  return t;
}

// --- converters

void convert_dropout(Context& c) {
  if (c.has_input(2) && (!c.is_constant(2) || c.constant(2).at(0) != 0))
    c.unsupported("training_mode must be a constant false (inference)");
  pass_through(c);
  if (c.num_outputs() > 1) {  // the mask of an inference dropout keeps everything
    const Shape s = c.shape(0);
    c.set_output(
        1, int_tensor(s, std::vector<int64_t>(static_cast<size_t>(graph::num_elements(s)), 1)));
  }
}

void convert_cast(Context& c) {
  const auto to = static_cast<int32_t>(c.attr_int("to", 0));
  if (!is_integer_type(to) && !is_float_type(to))
    c.unsupported("cast to " + elem_type_name(to) + " (float and integer types only)");
  if (c.is_constant(0)) {
    c.set_output(0, fold::cast(c.constant(0), is_integer_type(to)));
    return;
  }
  const bool is_f32 = c.graph().value(c.value(0)).dtype == graph::DType::kF32;
  if (is_f32 != is_float_type(to))
    c.unsupported("cast of a graph value between float and integer types (to " +
                  elem_type_name(to) + ")");
  c.set_output(0, c.value(0));
}

Tensor constant_attr(Context& c) {
  if (const onnx::TensorProto* t = c.attr_tensor("value")) return from_proto(*t, c.node_label());
  if (c.has_attr("value_float")) return {{}, false, {c.attr_float("value_float", 0)}, {}};
  if (c.has_attr("value_int")) return int_tensor({}, {c.attr_int("value_int", 0)});
  if (c.has_attr("value_ints")) {
    std::vector<int64_t> v = c.attr_ints("value_ints");
    return int_tensor({static_cast<int64_t>(v.size())}, v);
  }
  if (c.has_attr("value_floats")) {
    Tensor t;
    for (const auto& a : c.node().attribute())
      if (a.name() == "value_floats") t.f.assign(a.floats().begin(), a.floats().end());
    t.shape = {static_cast<int64_t>(t.f.size())};
    return t;
  }
  c.unsupported(
      "a Constant needs value, value_float(s) or value_int(s) (sparse and string "
      "values are not supported)");
}

void convert_constant(Context& c) {
  c.set_output(0, constant_attr(c));
}

void convert_constant_of_shape(Context& c) {
  const Shape shape = c.ints(0);
  Tensor fill{{}, false, {0.0}, {}};
  if (const onnx::TensorProto* t = c.attr_tensor("value")) fill = from_proto(*t, c.node_label());
  c.set_output(0, fold::expand(fold::reshape(fill, {}), shape));
}

void convert_shape(Context& c) {
  const Shape s = c.shape(0);
  const auto rank = static_cast<int64_t>(s.size());
  auto clampi = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clampi(c.attr_int("start", 0));
  const int64_t end = clampi(c.attr_int("end", rank));
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  c.set_output(0, int_tensor({static_cast<int64_t>(dims.size())}, dims));
}

void convert_size(Context& c) {
  c.set_output(0, int_tensor({}, {graph::num_elements(c.shape(0))}));
}

void convert_reshape(Context& c) {
  const Shape in = c.shape(0);
  Shape target = c.opset() < 5 ? c.attr_ints("shape") : c.ints(1);
  const bool allow_zero = c.attr_int("allowzero", 0) != 0;
  int64_t infer = -1, known = 1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == 0 && !allow_zero) {
      if (d >= in.size())
        c.unsupported("shape copies dimension " + std::to_string(d) + " of " +
                      graph::shape_str(in));
      target[d] = in[d];
    }
    if (target[d] == -1) {
      if (infer >= 0) c.unsupported("shape " + graph::shape_str(target) + " has two -1");
      infer = static_cast<int64_t>(d);
    } else if (target[d] < 0) {
      c.unsupported("shape " + graph::shape_str(target) + " has a negative dimension");
    } else if (target[d] > graph::Graph::kMaxElements ||
               known * target[d] > graph::Graph::kMaxElements) {
      c.unsupported("shape " + graph::shape_str(target) + " is too large");
    } else {
      known *= target[d];
    }
  }
  if (infer >= 0)
    target[static_cast<size_t>(infer)] = known == 0 ? 0 : graph::num_elements(in) / known;
  reshape_to(c, target);
}

void convert_flatten(Context& c) {
  const Shape in = c.shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) c.unsupported("axis " + std::to_string(axis) + " outside rank");
  const int64_t outer = graph::num_elements(Shape(in.begin(), in.begin() + axis));
  reshape_to(c, {outer, graph::num_elements(in) / std::max<int64_t>(outer, 1)});
}

void convert_squeeze(Context& c) {
  const Shape in = c.shape(0);
  const std::vector<int64_t> axes =
      norm_axes(c, ints_attr_or_input(c, "axes", 1, 13), static_cast<int64_t>(in.size()));
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool listed = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (listed && in[d] != 1)
      c.unsupported("axis " + std::to_string(d) + " of " + graph::shape_str(in) + " is not 1");
    if (!(listed || (axes.empty() && in[d] == 1))) out.push_back(in[d]);
  }
  reshape_to(c, out);
}

void convert_unsqueeze(Context& c) {
  const Shape in = c.shape(0);
  std::vector<int64_t> raw = ints_attr_or_input(c, "axes", 1, 13);
  const std::vector<int64_t> axes = norm_axes(c, raw, static_cast<int64_t>(in.size() + raw.size()));
  Shape out;
  size_t k = 0;
  for (size_t d = 0; d < in.size() + axes.size(); ++d)
    out.push_back(
        std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end() ? 1 : in[k++]);
  reshape_to(c, out);
}

void convert_transpose(Context& c) {
  const auto rank = static_cast<int64_t>(c.shape(0).size());
  Shape perm = c.attr_ints("perm");
  if (perm.empty())
    for (int64_t d = rank; d-- > 0;) perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != rank) c.unsupported("perm does not match the rank");
  if (c.is_constant(0))
    c.set_output(0, fold::transpose(c.constant(0), perm));
  else
    c.set_output(0, c.permute(c.value(0), perm));
}

bool fold_concat(Context& c) {
  std::vector<const Tensor*> parts;
  for (int i = 0; i < c.node().input_size(); ++i)
    if (c.has_input(i)) parts.push_back(&c.constant(i));
  if (parts.empty()) c.unsupported("no inputs");
  const int64_t axis =
      c.axis(c.attr_int("axis", 0), static_cast<int64_t>(parts.front()->shape.size()));
  c.set_output(0, fold::concat(parts, axis));
  return true;
}

int slice_value(Context& c, int x, const std::vector<fold::SliceAxis>& axes);

// Concatenation of graph values: binary concats left to right.
void convert_concat(Context& c) {
  std::vector<int> parts;
  for (int i = 0; i < c.node().input_size(); ++i)
    if (c.has_input(i)) parts.push_back(c.value(i));
  if (parts.empty()) c.unsupported("no inputs");
  const auto rank = static_cast<int64_t>(c.graph().value(parts[0]).shape.size());
  const int axis = static_cast<int>(c.axis(c.attr_int("axis", 0), rank));
  int y = parts[0];
  for (size_t k = 1; k < parts.size(); ++k)
    y = c.emit(OpKind::kConcat, {y, parts[k]}, graph::Attrs::concat(axis));
  c.set_output(0, y);
}

// Split into consecutive slices along `axis`: sizes from the `split` input (opset >= 13) or
// attribute, else equal parts.
void convert_split(Context& c) {
  const int x = c.value(0);
  const Shape in = c.graph().value(x).shape;
  const int64_t axis = c.axis(c.attr_int("axis", 0), static_cast<int64_t>(in.size()));
  const int64_t dim = in[static_cast<size_t>(axis)], n = c.num_outputs();
  std::vector<int64_t> sizes = ints_attr_or_input(c, "split", 1, 13);
  if (sizes.empty()) {
    if (n < 1 || dim % n != 0)
      c.unsupported("dimension " + std::to_string(dim) + " does not split into " +
                    std::to_string(n) + " equal parts");
    sizes.assign(static_cast<size_t>(n), dim / n);
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    c.unsupported("split sizes do not match the outputs");
  int64_t at = 0;
  for (int k = 0; k < n; ++k) {
    const int64_t end = at + sizes[static_cast<size_t>(k)];
    if (sizes[static_cast<size_t>(k)] < 0 || end > dim)
      c.unsupported("split sizes exceed dimension " + std::to_string(dim));
    c.set_output(k, slice_value(c, x, {{axis, at, end, 1}}));
    at = end;
  }
  if (at != dim) c.unsupported("split sizes do not add up to dimension " + std::to_string(dim));
}

// x padded along dim d by `before` and `after` elements (each smaller than the dim) in mode
// reflect (the elements next to the edge, mirrored without the edge) or edge (the edge element
// repeated): slices of x (reversed, or one element broadcast) concatenated on both sides.
int pad_from_x(Context& c, int x, size_t d, int64_t before, int64_t after, bool reflect) {
  const int src = x;
  const Shape xs = c.graph().value(x).shape;
  const int64_t n = xs[d];
  // `count` elements: reflect from index `first` down, or element `edge` repeated.
  auto side = [&](int64_t count, int64_t first, int64_t edge) {
    Shape shape = xs, starts(xs.size(), 0), steps(xs.size(), 1);
    shape[d] = reflect ? count : 1;
    starts[d] = reflect ? first : edge;
    steps[d] = reflect ? -1 : 1;
    const int s = c.emit(OpKind::kSlice, {src}, graph::Attrs::slice(shape, starts, steps));
    shape[d] = count;
    return reflect ? s : c.emit(OpKind::kBroadcast, {s}, graph::Attrs::reshape(shape));
  };
  const auto axis = static_cast<int>(d);
  if (before > 0)
    x = c.emit(OpKind::kConcat, {side(before, before, 0), x}, graph::Attrs::concat(axis));
  if (after > 0)
    x = c.emit(OpKind::kConcat, {x, side(after, n - 2, n - 1)}, graph::Attrs::concat(axis));
  return x;
}

// Pad's attributes: pads (input 1 from opset 11, else the attribute) [begin..., end...] >= 0;
// mode constant (the value: input 2, else the attribute; default 0), reflect (each pad smaller
// than its dim) or edge.
struct PadSpec {
  std::string mode;
  std::vector<int64_t> pads;
  double value = 0;
};
PadSpec pad_spec(Context& c) {
  PadSpec p{c.attr_string("mode", "constant"), {}, c.attr_float("value", 0.0)};
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge")
    c.unsupported("mode " + p.mode + " (constant, reflect and edge are supported)");
  const Shape x = c.shape(0);
  p.pads = ints_attr_or_input(c, "pads", 1, 11);
  if (p.pads.size() != 2 * x.size())
    c.unsupported("pads " + graph::shape_str(p.pads) + " for input " + graph::shape_str(x));
  if (std::any_of(p.pads.begin(), p.pads.end(), [](int64_t v) { return v < 0; }))
    c.unsupported("negative pads " + graph::shape_str(p.pads));
  for (size_t d = 0; d < x.size() && p.mode == "reflect"; ++d)
    if (p.pads[d] >= x[d] || p.pads[d + x.size()] >= x[d])
      c.unsupported("reflect pads " + graph::shape_str(p.pads) + " of " + graph::shape_str(x) +
                    " (each must be smaller than its dimension)");
  if (c.opset() >= 11 && c.has_input(2)) p.value = c.constant(2).at(0);
  return p;
}

void convert_pad(Context& c) {
  const PadSpec p = pad_spec(c);
  const Shape x = c.shape(0);
  if (p.mode != "constant") {
    int y = c.value(0);
    for (size_t d = 0; d < x.size(); ++d)
      y = pad_from_x(c, y, d, p.pads[d], p.pads[d + x.size()], p.mode == "reflect");
    c.set_output(0, y);
    return;
  }
  Shape out = x, starts(p.pads.begin(), p.pads.begin() + static_cast<long>(x.size()));
  for (size_t d = 0; d < x.size(); ++d) out[d] += p.pads[d] + p.pads[d + x.size()];
  c.set_output(
      0, out == x ? c.value(0)
                  : c.emit(OpKind::kPad, {c.value(0)}, graph::Attrs::padded(out, starts, p.value)));
}

// Pad on a constant: every output element's source (the value outside x in constant mode; the
// mirrored or nearest element of x otherwise).
bool fold_pad(Context& c) {
  const PadSpec p = pad_spec(c);
  const Tensor& x = c.constant(0);
  const size_t r = x.shape.size();
  Tensor y;
  y.integer = x.integer;
  y.shape = x.shape;
  for (size_t d = 0; d < r; ++d) y.shape[d] += p.pads[d] + p.pads[d + r];
  fold::check_fold_size(y.shape);
  Shape at(r, 0);  // the output index, row-major
  for (int64_t k = 0; k < graph::num_elements(y.shape); ++k) {
    int64_t src = 0;
    bool outside = false;
    for (size_t d = 0; d < r; ++d) {
      const int64_t n = x.shape[d];
      int64_t i = at[d] - p.pads[d];
      if (p.mode == "edge") i = std::clamp<int64_t>(i, 0, n - 1);
      if (p.mode == "reflect") i = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
      outside = outside || i < 0 || i >= n;
      src = src * n + std::clamp<int64_t>(i, 0, n - 1);
    }
    if (y.integer)
      y.i.push_back(outside ? saturate(p.value) : x.i[static_cast<size_t>(src)]);
    else
      y.f.push_back(outside ? p.value : x.f[static_cast<size_t>(src)]);
    for (size_t d = r; d-- > 0;) {
      if (++at[d] < y.shape[d]) break;
      at[d] = 0;
    }
  }
  c.set_output(0, std::move(y));
  return true;
}

// x gathered at constant indices along `axis`: one slice per index, concatenated, reshaped to
// x's dims before the axis, the indices' dims, x's dims after it.
int gather_slices(Context& c, int x, const Tensor& indices, int64_t axis) {
  const Shape xs = c.graph().value(x).shape;
  const auto a = static_cast<size_t>(axis);
  if (indices.size() < 1) c.unsupported("no indices");
  Shape one = xs;
  one[a] = 1;
  const Shape starts(xs.size(), 0), steps(xs.size(), 1);
  int y = -1;
  for (int64_t k = 0; k < indices.size(); ++k) {
    int64_t index = indices.index(k);
    if (index < 0) index += xs[a];
    if (index < 0 || index >= xs[a])
      c.unsupported("index " + std::to_string(indices.index(k)) + " is outside " +
                    graph::shape_str(xs) + " on axis " + std::to_string(axis));
    Shape at = starts;
    at[a] = index;
    const int part = c.emit(OpKind::kSlice, {x}, graph::Attrs::slice(one, at, steps));
    y = y < 0 ? part
              : c.emit(OpKind::kConcat, {y, part}, graph::Attrs::concat(static_cast<int>(a)));
  }
  Shape out(xs.begin(), xs.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), xs.begin() + axis + 1, xs.end());
  return c.reshape(y, out);
}

void convert_gather(Context& c) {
  const Shape data = c.shape(0);
  const int64_t axis = c.axis(c.attr_int("axis", 0), static_cast<int64_t>(data.size()));
  if (c.is_constant(0) && c.is_constant(1)) {
    c.set_output(0, fold::gather(c.constant(0), c.constant(1), axis));
    return;
  }
  if (c.is_constant(1) && c.constant(1).shape.empty()) {  // one index: a select on that axis
    int64_t index = c.constant(1).index(0);
    if (index < 0) index += data[static_cast<size_t>(axis)];
    if (index < 0 || index >= data[static_cast<size_t>(axis)])
      c.unsupported("index " + std::to_string(index) + " is outside " + graph::shape_str(data));
    Shape perm{axis};
    for (int64_t d = 0; d < static_cast<int64_t>(data.size()); ++d)
      if (d != axis) perm.push_back(d);
    const int front = c.permute(c.value(0), perm);
    c.set_output(0,
                 c.emit(OpKind::kSelect, {front}, graph::Attrs::select(static_cast<int>(index))));
    return;
  }
  if (axis == 0 && !c.is_constant(1)) {  // ids into the rows of a table: an embedding
    const int64_t row = graph::num_elements(data) / data[0];
    const int table = c.reshape(c.value(0), {data[0], row});
    const int y = c.emit(OpKind::kEmbedding, {table, c.value(1)});
    Shape out = c.graph().value(c.value(1)).shape;
    out.insert(out.end(), data.begin() + 1, data.end());
    c.set_output(0, c.reshape(y, out));
    return;
  }
  if (!c.is_constant(1))
    c.unsupported("indices that are not constants on axis " + std::to_string(axis) +
                  " (supported on axis 0)");
  c.set_output(0, gather_slices(c, c.value(0), c.constant(1), axis));
}

// Slice's per-axis (start, end, step), clamped to the dimension as ONNX defines.
std::vector<fold::SliceAxis> slice_axes(Context& c) {
  const Shape in = c.shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  } else {
    starts = c.ints(1);
    ends = c.ints(2);
    if (c.has_input(3)) axes = c.ints(3);
    if (c.has_input(4)) steps = c.ints(4);
  }
  if (axes.empty())
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.unsupported("starts, ends, axes and steps differ in length");
  std::vector<fold::SliceAxis> out;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = c.axis(axes[k], rank), dim = in[static_cast<size_t>(a)], step = steps[k];
    if (step == 0) c.unsupported("step 0");
    auto clampi = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -dim ? -1 : v + dim;  // -dim-1 and below: before the first element
      return std::clamp(v, lo, hi);
    };
    const int64_t start = step > 0 ? clampi(starts[k], 0, dim) : clampi(starts[k], -1, dim - 1);
    const int64_t end = step > 0 ? clampi(ends[k], 0, dim) : clampi(ends[k], -1, dim - 1);
    out.push_back({a, start, end, step});
  }
  return out;
}

// A graph slice of x; the identity when it keeps everything. An empty slice is Unsupported
// (graph values have no zero dims).
int slice_value(Context& c, int x, const std::vector<fold::SliceAxis>& axes) {
  const Shape in = c.graph().value(x).shape;
  Shape out = in, starts(in.size(), 0), steps(in.size(), 1);
  for (const fold::SliceAxis& s : axes) {
    const auto d = static_cast<size_t>(s.axis);
    out[d] = fold::slice_count(s.start, s.end, s.step);
    starts[d] = s.start;
    steps[d] = s.step;
    if (out[d] < 1) c.unsupported("an empty slice of " + graph::shape_str(in));
  }
  if (out == in && std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; }))
    return x;
  return c.emit(OpKind::kSlice, {x}, graph::Attrs::slice(out, starts, steps));
}

void convert_slice(Context& c) {
  if (c.is_constant(0)) {
    c.set_output(0, fold::slice(c.constant(0), slice_axes(c)));
    return;
  }
  const int x = c.value(0);
  c.set_output(0, slice_value(c, x, slice_axes(c)));
}

void convert_expand(Context& c) {
  const Shape target = c.ints(1);
  if (c.is_constant(0)) {
    c.set_output(0, fold::expand(c.constant(0), target));
    return;
  }
  Shape out;
  try {
    out = fold::broadcast_shapes(c.shape(0), target);
  } catch (const Error& e) {
    c.unsupported(e.why());
  }
  const int x = c.value(0);
  c.set_output(0,
               out == c.shape(0) ? x : c.emit(OpKind::kBroadcast, {x}, graph::Attrs::reshape(out)));
}

void convert_range(Context& c) {
  const double start = c.constant(0).at(0), limit = c.constant(1).at(0),
               delta = c.constant(2).at(0);
  if (delta == 0) c.unsupported("delta 0");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (!(count <= static_cast<double>(fold::kMaxFoldElements)))
    c.unsupported("a range of " + std::to_string(count) + " elements");
  const auto n = static_cast<int64_t>(count);
  Tensor t;
  t.integer = c.constant(0).integer;
  t.shape = {n};
  for (int64_t k = 0; k < n; ++k) {
    const double v = start + static_cast<double>(k) * delta;
    t.integer ? t.i.push_back(saturate(v)) : t.f.push_back(v);
  }
  c.set_output(0, t);
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t["Identity"] = {pass_through, nullptr};
  t["Dropout"] = {convert_dropout, nullptr};
  t["Cast"] = {convert_cast, nullptr};
  t["Constant"] = {convert_constant, nullptr};
  t["ConstantOfShape"] = {convert_constant_of_shape, nullptr};
  t["Shape"] = {convert_shape, nullptr};
  t["Size"] = {convert_size, nullptr};
  t["Reshape"] = {convert_reshape, nullptr};
  t["Flatten"] = {convert_flatten, nullptr};
  t["Squeeze"] = {convert_squeeze, nullptr};
  t["Unsqueeze"] = {convert_unsqueeze, nullptr};
  t["Transpose"] = {convert_transpose, nullptr};
  t["Concat"] = {convert_concat, fold_concat};
  t["Gather"] = {convert_gather, nullptr};
  t["Pad"] = {convert_pad, fold_pad};
  t["Slice"] = {convert_slice, nullptr};
  t["Split"] = {convert_split, nullptr};
  t["Expand"] = {convert_expand, nullptr};
  t["Range"] = {convert_range, nullptr};
}

}  // namespace tessera::onnx_import
