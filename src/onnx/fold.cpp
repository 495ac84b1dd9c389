#include "onnx/fold.h"

#include <cmath>

#include "common/error.h"

namespace tessera::onnx_import::fold {

using graph::Shape;

void check_fold_size(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) throw Error("constant folding", "negative dimension in " + graph::shape_str(shape));
  if (graph::num_elements(shape) > kMaxFoldElements)
    throw Error("constant folding", "a folded constant of shape " + graph::shape_str(shape) +
                                        " exceeds " + std::to_string(kMaxFoldElements) +
                                        " elements");
}

namespace {

Tensor like(const Shape& shape, bool integer) {
  check_fold_size(shape);
  Tensor t;
  t.shape = shape;
  t.integer = integer;
  (integer ? t.i.resize(static_cast<size_t>(graph::num_elements(shape)))
           : t.f.resize(static_cast<size_t>(graph::num_elements(shape))));
  return t;
}

void put(Tensor& t, int64_t k, double v) {
  if (t.integer)
    t.i[k] = saturate(v);
  else
    t.f[k] = v;
}

// Copies element `from` of x to element `to` of out (exact for both kinds).
void copy_elem(const Tensor& x, int64_t from, Tensor& out, int64_t to) {
  if (x.integer)
    out.i[to] = x.i[from];
  else
    out.f[to] = x.f[from];
}

// Calls f(flat index, multi-index) for every element of `shape` in row-major order.
template <typename F>
void for_each_index(const Shape& shape, F f) {
  const int64_t n = graph::num_elements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(k, idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error("broadcast", "shapes " + graph::shape_str(a) + " and " + graph::shape_str(b) +
                                   " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  const std::vector<int64_t> st = strides_of(s);
  std::vector<int64_t> result(out.size(), 0);
  const size_t off = out.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d) result[off + d] = s[d] == 1 ? 0 : st[d];
  return result;
}

Tensor binary(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& op) {
  const Shape out = broadcast_shapes(a.shape, b.shape);
  const std::vector<int64_t> sa = broadcast_strides(a.shape, out);
  const std::vector<int64_t> sb = broadcast_strides(b.shape, out);
  Tensor t = like(out, a.integer && b.integer);
  for_each_index(out, [&](int64_t k, const std::vector<int64_t>& idx) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    put(t, k, op(a.at(ia), b.at(ib)));
  });
  return t;
}

Tensor unary(const Tensor& x, const std::function<double(double)>& op) {
  Tensor t = like(x.shape, x.integer);
  for (int64_t k = 0; k < x.size(); ++k) put(t, k, op(x.at(k)));
  return t;
}

Tensor cast(const Tensor& x, bool to_integer) {
  Tensor t = like(x.shape, to_integer);
  for (int64_t k = 0; k < x.size(); ++k) put(t, k, to_integer ? std::trunc(x.at(k)) : x.at(k));
  if (x.integer && to_integer) t.i = x.i;
  return t;
}

Tensor reshape(Tensor x, const Shape& shape) {
  if (graph::num_elements(shape) != x.size())
    throw Error("reshape", "element counts differ: " + graph::shape_str(x.shape) + " vs " +
                               graph::shape_str(shape));
  x.shape = shape;
  return x;
}

Tensor expand(const Tensor& x, const Shape& shape) {
  const Shape out = broadcast_shapes(x.shape, shape);
  const std::vector<int64_t> sx = broadcast_strides(x.shape, out);
  Tensor t = like(out, x.integer);
  for_each_index(out, [&](int64_t k, const std::vector<int64_t>& idx) {
    int64_t ix = 0;
    for (size_t d = 0; d < idx.size(); ++d) ix += idx[d] * sx[d];
    copy_elem(x, ix, t, k);
  });
  return t;
}

Tensor transpose(const Tensor& x, const Shape& perm) {
  Shape out(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) out[d] = x.shape[static_cast<size_t>(perm[d])];
  const std::vector<int64_t> sx = strides_of(x.shape);
  Tensor t = like(out, x.integer);
  for_each_index(out, [&](int64_t k, const std::vector<int64_t>& idx) {
    int64_t ix = 0;
    for (size_t d = 0; d < idx.size(); ++d) ix += idx[d] * sx[static_cast<size_t>(perm[d])];
    copy_elem(x, ix, t, k);
  });
  return t;
}

Tensor gather(const Tensor& data, const Tensor& indices, int64_t axis) {
  const auto a = static_cast<size_t>(axis);
  Shape out(data.shape.begin(), data.shape.begin() + static_cast<long>(a));
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + static_cast<long>(a) + 1, data.shape.end());
  const std::vector<int64_t> sd = strides_of(data.shape);
  const size_t ri = indices.shape.size();
  Tensor t = like(out, data.integer);
  const std::vector<int64_t> si = strides_of(indices.shape);
  for_each_index(out, [&](int64_t k, const std::vector<int64_t>& idx) {
    int64_t flat_i = 0;
    for (size_t d = 0; d < ri; ++d) flat_i += idx[a + d] * si[d];
    const int64_t index = indices.index(flat_i);
    const int64_t g = index < 0 ? index + data.shape[a] : index;
    if (g < 0 || g >= data.shape[a])
      throw Error("gather", "index " + std::to_string(index) + " is outside dimension " +
                                std::to_string(data.shape[a]));
    int64_t ix = g * sd[a];
    for (size_t d = 0; d < a; ++d) ix += idx[d] * sd[d];
    for (size_t d = a + 1; d < data.shape.size(); ++d) ix += idx[d + ri - 1] * sd[d];
    copy_elem(data, ix, t, k);
  });
  return t;
}

Tensor concat(const std::vector<const Tensor*>& parts, int64_t axis) {
  if (parts.empty()) throw Error("concat", "no inputs");
  const auto a = static_cast<size_t>(axis);
  Shape out = parts.front()->shape;
  out[a] = 0;
  bool integer = true;
  for (const Tensor* p : parts) {
    Shape s = p->shape;
    if (s.size() != out.size()) throw Error("concat", "ranks differ");
    s[a] = 0;
    for (size_t d = 0; d < s.size(); ++d)
      if (d != a && s[d] != out[d])
        throw Error("concat", "shapes " + graph::shape_str(parts.front()->shape) + " and " +
                                  graph::shape_str(p->shape) + " differ off the axis");
    out[a] += p->shape[a];
    integer = integer && p->integer;
  }
  Tensor t = like(out, integer);
  const int64_t outer = graph::num_elements(Shape(out.begin(), out.begin() + static_cast<long>(a)));
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* p : parts) {
      const int64_t block = p->size() / std::max<int64_t>(outer, 1);
      for (int64_t j = 0; j < block; ++j) put(t, k++, p->at(o * block + j));
    }
  return t;
}

int64_t slice_count(int64_t start, int64_t end, int64_t step) {
  if (step > 0) return end > start ? (end - start - 1) / step + 1 : 0;
  return start > end ? (start - end - 1) / -std::max(step, -kMaxStep) + 1 : 0;
}

Tensor slice(const Tensor& x, const std::vector<SliceAxis>& axes) {
  Shape out = x.shape;
  std::vector<int64_t> start(x.shape.size(), 0), step(x.shape.size(), 1);
  for (const SliceAxis& s : axes) {
    const auto d = static_cast<size_t>(s.axis);
    out[d] = slice_count(s.start, s.end, s.step);
    start[d] = s.start;
    step[d] = s.step;
  }
  const std::vector<int64_t> sx = strides_of(x.shape);
  Tensor t = like(out, x.integer);
  for_each_index(out, [&](int64_t k, const std::vector<int64_t>& idx) {
    int64_t ix = 0;
    for (size_t d = 0; d < idx.size(); ++d) ix += (start[d] + idx[d] * step[d]) * sx[d];
    copy_elem(x, ix, t, k);
  });
  return t;
}

}  // namespace tessera::onnx_import::fold
