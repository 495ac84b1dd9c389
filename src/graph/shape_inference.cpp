#include "graph/shape_inference.h"

#include <string>

#include "common/error.h"

namespace tessera::graph {

namespace {

struct Ctx {
  OpKind op;
  const std::vector<const Value*>& in;

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(std::string(op_name(op)), why);
  }
  const Shape& shape(int i) const { return in[i]->shape; }
  std::string s(int i) const { return shape_str(in[i]->shape); }
  void rank(int i, size_t r, const char* what) const {
    if (shape(i).size() != r)
      fail(std::string(what) + " must have rank " + std::to_string(r) + ", got " + s(i));
  }
  void f32(int i, const char* what) const {
    if (in[i]->dtype != DType::kF32) fail(std::string(what) + " must be f32, got i32");
  }
};

bool is_suffix(const Shape& small, const Shape& big) {
  if (small.size() > big.size()) return false;
  return std::equal(small.begin(), small.end(), big.end() - static_cast<long>(small.size()));
}

InferredType infer_matmul(const Ctx& c) {
  c.rank(0, 2, "a");
  c.rank(1, 2, "b");
  if (c.shape(0)[1] != c.shape(1)[0])
    c.fail("inner dimensions differ: a " + c.s(0) + " x b " + c.s(1));
  return {{c.shape(0)[0], c.shape(1)[1]}, DType::kF32};
}

InferredType infer_add(const Ctx& c) {
  if (!is_suffix(c.shape(1), c.shape(0)))
    c.fail("b " + c.s(1) + " does not broadcast to a " + c.s(0) +
           " (b's shape must be a suffix of a's)");
  return {c.shape(0), DType::kF32};
}

InferredType infer_same(const Ctx& c, const char* a, const char* b) {
  if (c.shape(0) != c.shape(1))
    c.fail(std::string(a) + " " + c.s(0) + " and " + b + " " + c.s(1) + " differ");
  return {c.shape(0), DType::kF32};
}

InferredType infer_sce(const Ctx& c, bool grad) {
  c.rank(0, 2, "logits");
  c.rank(1, 1, "labels");
  if (c.in[1]->dtype != DType::kI32) c.fail("labels must be i32, got f32");
  if (c.shape(1)[0] != c.shape(0)[0])
    c.fail("labels " + c.s(1) + " do not match the batch of logits " + c.s(0));
  if (!grad) return {{}, DType::kF32};
  if (!c.shape(2).empty()) c.fail("dloss must be a scalar [], got " + c.s(2));
  return {c.shape(0), DType::kF32};
}

void check_conv_attrs(const Ctx& c, const Attrs& a) {
  if (a.stride < 1) c.fail("stride must be >= 1, got " + std::to_string(a.stride));
  if (a.pad < 0) c.fail("pad must be >= 0, got " + std::to_string(a.pad));
}

// Output shape of conv(x, w) for x [N,H,W,Ci], w [KH,KW,Ci,Co].
Shape conv_out(const Ctx& c, const Shape& x, const Shape& w, const Attrs& a) {
  if (x[3] != w[2])
    c.fail("input channels differ: x " + shape_str(x) + " vs w " + shape_str(w) + " (NHWC, HWIO)");
  const int64_t oh = window_out_size(x[1], w[0], a.stride, a.pad);
  const int64_t ow = window_out_size(x[2], w[1], a.stride, a.pad);
  if (oh < 1 || ow < 1)
    c.fail("kernel " + shape_str(w) + " larger than padded input " + shape_str(x) + " (pad " +
           std::to_string(a.pad) + ")");
  return {x[0], oh, ow, w[3]};
}

InferredType infer_conv(const Ctx& c, const Attrs& a) {
  c.rank(0, 4, "x");
  c.rank(1, 4, "w");
  check_conv_attrs(c, a);
  return {conv_out(c, c.shape(0), c.shape(1), a), DType::kF32};
}

InferredType infer_conv_input_grad(const Ctx& c, const Attrs& a) {
  c.rank(0, 4, "dy");
  c.rank(1, 4, "w");
  check_conv_attrs(c, a);
  if (a.shape.size() != 4)
    c.fail("attr shape (x's shape) must have rank 4, got " + shape_str(a.shape));
  if (conv_out(c, a.shape, c.shape(1), a) != c.shape(0))
    c.fail("dy " + c.s(0) + " is not conv(x " + shape_str(a.shape) + ", w " + c.s(1) + ")'s shape");
  return {a.shape, DType::kF32};
}

InferredType infer_conv_weight_grad(const Ctx& c, const Attrs& a) {
  c.rank(0, 4, "x");
  c.rank(1, 4, "dy");
  check_conv_attrs(c, a);
  if (a.shape.size() != 4)
    c.fail("attr shape (w's shape) must have rank 4, got " + shape_str(a.shape));
  if (conv_out(c, c.shape(0), a.shape, a) != c.shape(1))
    c.fail("dy " + c.s(1) + " is not conv(x " + c.s(0) + ", w " + shape_str(a.shape) + ")'s shape");
  return {a.shape, DType::kF32};
}

InferredType infer_pool(const Ctx& c, const Attrs& a) {
  c.rank(0, 4, "x");
  if (a.kernel < 1 || a.stride < 1)
    c.fail("kernel and stride must be >= 1, got kernel " + std::to_string(a.kernel) + " stride " +
           std::to_string(a.stride));
  const Shape& x = c.shape(0);
  const int64_t oh = window_out_size(x[1], a.kernel, a.stride, 0);
  const int64_t ow = window_out_size(x[2], a.kernel, a.stride, 0);
  if (oh < 1 || ow < 1) c.fail("window " + std::to_string(a.kernel) + " larger than x " + c.s(0));
  return {{x[0], oh, ow, x[3]}, DType::kF32};
}

InferredType infer_pool_grad(const Ctx& c, const Attrs& a) {
  c.rank(0, 4, "dy");
  const std::vector<const Value*> x_only{c.in[1]};
  const InferredType y = infer_pool(Ctx{c.op, x_only}, a);
  if (y.shape != c.shape(0))
    c.fail("dy " + c.s(0) + " is not maxpool(x " + c.s(1) + ")'s shape " + shape_str(y.shape));
  return {c.shape(1), DType::kF32};
}

InferredType infer_reshape(const Ctx& c, const Attrs& a) {
  for (int64_t d : a.shape)
    if (d < 1) c.fail("target shape " + shape_str(a.shape) + " has a dimension < 1");
  if (num_elements(a.shape) != num_elements(c.shape(0)))
    c.fail("element counts differ: x " + c.s(0) + " vs target " + shape_str(a.shape));
  return {a.shape, c.in[0]->dtype};
}

InferredType infer_reduce_rows(const Ctx& c) {
  if (c.shape(0).empty()) c.fail("x must have rank >= 1, got []");
  return {{c.shape(0).back()}, DType::kF32};
}

InferredType infer_embedding(const Ctx& c) {
  c.rank(0, 2, "table");
  if (c.in[1]->dtype != DType::kI32) c.fail("ids must be i32, got f32");
  if (c.shape(1).empty()) c.fail("ids must have rank >= 1, got []");
  Shape out = c.shape(1);
  out.push_back(c.shape(0)[1]);
  return {out, DType::kF32};
}

InferredType infer_embedding_grad(const Ctx& c, const Attrs& a) {
  if (c.in[1]->dtype != DType::kI32) c.fail("ids must be i32, got f32");
  if (a.shape.size() != 2 || a.shape[0] < 1 || a.shape[1] < 1)
    c.fail("attr shape (the table's shape) must be [V, D] with V, D >= 1, got " +
           shape_str(a.shape));
  Shape rows = c.shape(1);
  rows.push_back(a.shape[1]);
  if (c.shape(0) != rows)
    c.fail("dy " + c.s(0) + " is not embedding(table " + shape_str(a.shape) + ", ids " + c.s(1) +
           ")'s shape " + shape_str(rows));
  return {a.shape, DType::kF32};
}

// embedding_bag's output for ids [N], offsets [B+1] and the table's width D (checking the id
// inputs).
Shape embedding_bag_shape(const Ctx& c, int ids, int offsets, int64_t dim, const Attrs& a) {
  if (c.in[ids]->dtype != DType::kI32 || c.in[offsets]->dtype != DType::kI32)
    c.fail("ids and offsets must be i32");
  c.rank(ids, 1, "ids");
  c.rank(offsets, 1, "offsets");
  if (c.shape(offsets)[0] < 2) c.fail("offsets " + c.s(offsets) + " must hold B + 1 >= 2 entries");
  const int64_t rows =
      a.combiner == numerics::Combiner::None ? c.shape(ids)[0] : c.shape(offsets)[0] - 1;
  return {rows, dim};
}

InferredType infer_embedding_bag(const Ctx& c, const Attrs& a) {
  c.rank(2, 2, "table");
  return {embedding_bag_shape(c, 0, 1, c.shape(2)[1], a), DType::kF32};
}

InferredType infer_embedding_bag_grad(const Ctx& c, const Attrs& a) {
  if (a.shape.size() != 2 || a.shape[0] < 1 || a.shape[1] < 1)
    c.fail("attr shape (the table's shape) must be [V, D] with V, D >= 1, got " +
           shape_str(a.shape));
  const Shape want = embedding_bag_shape(c, 1, 2, a.shape[1], a);
  if (c.shape(0) != want)
    c.fail("dy " + c.s(0) + " is not embedding_bag's output shape " + shape_str(want));
  return {a.shape, DType::kF32};
}

// The last-axis size D of x (input 1 for the gradients, 0 for layer_norm), checking gain [D]
// (and bias [D]).
void check_layer_norm(const Ctx& c, int x, int gain, int bias, const Attrs& a) {
  if (c.shape(x).empty()) c.fail("x must have rank >= 1, got []");
  const Shape d{c.shape(x).back()};
  if (c.shape(gain) != d) c.fail("gain " + c.s(gain) + " is not [D] of x " + c.s(x));
  if (bias >= 0 && c.shape(bias) != d) c.fail("bias " + c.s(bias) + " is not [D] of x " + c.s(x));
  if (!(a.eps > 0)) c.fail("eps must be > 0, got " + std::to_string(a.eps));
}

// The per-channel ops of batch normalisation: x (input `x`, rank >= 1) and the [C] vectors from
// input `first_vector` on, C being x's last dim; a tensor input before x (dy, u) has x's shape.
Shape check_channels(const Ctx& c, int x, int first_vector) {
  if (x == 1) infer_same(c, "dy", "x");
  if (c.shape(x).empty()) c.fail("x must have rank >= 1, got []");
  const Shape channels{c.shape(x).back()};
  for (size_t i = static_cast<size_t>(first_vector); i < c.in.size(); ++i)
    if (c.shape(static_cast<int>(i)) != channels)
      c.fail("input " + std::to_string(i) + " " + c.s(static_cast<int>(i)) + " is not [C] of x " +
             c.s(x));
  return channels;
}

InferredType infer_layer_norm_gain_grad(const Ctx& c, const Attrs& a) {
  infer_same(c, "dy", "x");
  if (c.shape(1).empty()) c.fail("x must have rank >= 1, got []");
  if (!(a.eps > 0)) c.fail("eps must be > 0, got " + std::to_string(a.eps));
  return {{c.shape(1).back()}, DType::kF32};
}

InferredType infer_softmax(const Ctx& c, const Attrs& a) {
  const Shape& x = c.shape(0);
  if (x.empty()) c.fail("x must have rank >= 1, got []");
  if (a.causal && (x.size() < 2 || x[x.size() - 2] > x.back()))
    c.fail("a causal softmax takes x [..., S, T] with S <= T, got " + c.s(0));
  return {x, DType::kF32};
}

InferredType infer_batch_matmul(const Ctx& c, const Attrs& a) {
  const Shape &x = c.shape(0), &y = c.shape(1);
  if (x.size() < 2 || y.size() != x.size())
    c.fail("a and b must have the same rank >= 2, got a " + c.s(0) + " and b " + c.s(1));
  const size_t r = x.size();
  if (!std::equal(x.begin(), x.end() - 2, y.begin()))
    c.fail("leading (batch) dimensions differ: a " + c.s(0) + " and b " + c.s(1));
  const int64_t m = a.transpose_a ? x[r - 1] : x[r - 2], ka = a.transpose_a ? x[r - 2] : x[r - 1];
  const int64_t kb = a.transpose_b ? y[r - 1] : y[r - 2], n = a.transpose_b ? y[r - 2] : y[r - 1];
  if (ka != kb)
    c.fail("inner dimensions differ: a " + c.s(0) + (a.transpose_a ? "^T" : "") + " x b " + c.s(1) +
           (a.transpose_b ? "^T" : ""));
  Shape out(x.begin(), x.end() - 2);
  out.push_back(m);
  out.push_back(n);
  return {out, DType::kF32};
}

InferredType infer_permute(const Ctx& c, const Attrs& a) {
  const Shape& x = c.shape(0);
  std::vector<bool> seen(x.size(), false);
  bool ok = a.perm.size() == x.size();
  for (size_t i = 0; ok && i < a.perm.size(); ++i) {
    const int64_t d = a.perm[i];
    ok = d >= 0 && d < static_cast<int64_t>(x.size()) && !seen[static_cast<size_t>(d)];
    if (ok) seen[static_cast<size_t>(d)] = true;
  }
  if (!ok) c.fail("perm " + shape_str(a.perm) + " is not a permutation of x " + c.s(0) + "'s dims");
  Shape out;
  for (int64_t d : a.perm) out.push_back(x[static_cast<size_t>(d)]);
  return {out, DType::kF32};
}

InferredType infer_dropout(const Ctx& c, const Attrs& a) {
  if (!(a.rate >= 0 && a.rate < 1)) c.fail("rate must be in [0, 1), got " + std::to_string(a.rate));
  return {c.shape(0), DType::kF32};
}

InferredType infer_select(const Ctx& c, const Shape& x, const Attrs& a) {
  if (x.empty()) c.fail("x must have rank >= 1, got []");
  if (a.index < 0 || a.index >= x[0])
    c.fail("index " + std::to_string(a.index) + " is outside the first dim of x " + shape_str(x));
  return {Shape(x.begin() + 1, x.end()), DType::kF32};
}

InferredType infer_select_grad(const Ctx& c, const Attrs& a) {
  for (int64_t d : a.shape)
    if (d < 1) c.fail("attr shape (x's shape) " + shape_str(a.shape) + " has a dimension < 1");
  if (infer_select(c, a.shape, a).shape != c.shape(0))
    c.fail("dy " + c.s(0) + " is not select(x " + shape_str(a.shape) + ")'s shape");
  return {a.shape, DType::kF32};
}

// Whether `small` broadcasts to `big` (numpy rules, right-aligned; no dim of `big` grows).
bool broadcasts_to(const Shape& small, const Shape& big) {
  if (small.size() > big.size()) return false;
  const size_t off = big.size() - small.size();
  for (size_t d = 0; d < small.size(); ++d)
    if (small[d] != 1 && small[d] != big[off + d]) return false;
  return true;
}

InferredType infer_broadcast(const Ctx& c, const Attrs& a, bool sum) {
  for (int64_t d : a.shape)
    if (d < 1) c.fail("attr shape " + shape_str(a.shape) + " has a dimension < 1");
  const bool ok = sum ? broadcasts_to(a.shape, c.shape(0)) : broadcasts_to(c.shape(0), a.shape);
  if (!ok)
    c.fail(sum ? "attr shape " + shape_str(a.shape) + " does not broadcast to x " + c.s(0)
               : "x " + c.s(0) + " does not broadcast to attr shape " + shape_str(a.shape));
  return {a.shape, DType::kF32};
}

// A slice of x (shape `x`) with the attrs' starts and steps and output shape must stay inside x.
void check_slice(const Ctx& c, const Shape& x, const Attrs& a) {
  const size_t r = x.size();
  if (a.starts.size() != r || a.steps.size() != r || a.shape.size() != r)
    c.fail("starts " + shape_str(a.starts) + ", steps " + shape_str(a.steps) + " and shape " +
           shape_str(a.shape) + " must each have x's rank " + std::to_string(r));
  for (size_t d = 0; d < r; ++d) {
    const int64_t last = a.starts[d] + (a.shape[d] - 1) * a.steps[d];
    if (a.shape[d] < 1 || a.steps[d] == 0 || a.starts[d] < 0 || a.starts[d] >= x[d] || last < 0 ||
        last >= x[d])
      c.fail("dim " + std::to_string(d) + ": " + std::to_string(a.shape[d]) + " elements from " +
             std::to_string(a.starts[d]) + " by " + std::to_string(a.steps[d]) +
             " do not fit in x " + shape_str(x));
  }
}

InferredType infer_concat(const Ctx& c, const Attrs& a) {
  const Shape &x = c.shape(0), &y = c.shape(1);
  const auto r = static_cast<int>(x.size());
  if (y.size() != x.size() || a.axis < 0 || a.axis >= r)
    c.fail("a " + c.s(0) + " and b " + c.s(1) + " must have one rank > axis " +
           std::to_string(a.axis));
  Shape out = x;
  out[static_cast<size_t>(a.axis)] += y[static_cast<size_t>(a.axis)];
  for (int d = 0; d < r; ++d)
    if (d != a.axis && x[static_cast<size_t>(d)] != y[static_cast<size_t>(d)])
      c.fail("a " + c.s(0) + " and b " + c.s(1) + " differ off axis " + std::to_string(a.axis));
  return {out, DType::kF32};
}

InferredType infer_pad(const Ctx& c, const Attrs& a) {
  const Shape& x = c.shape(0);
  bool ok = a.starts.size() == x.size() && a.shape.size() == x.size();
  for (size_t d = 0; ok && d < x.size(); ++d)
    ok = a.starts[d] >= 0 && a.starts[d] + x[d] <= a.shape[d];
  if (!ok)
    c.fail("x " + c.s(0) + " at offsets " + shape_str(a.starts) + " does not fit in attr shape " +
           shape_str(a.shape));
  return {a.shape, DType::kF32};
}

InferredType infer_reduce_max_grad(const Ctx& c) {
  infer_same(Ctx{c.op, {c.in[0], c.in[2]}}, "dy", "y");
  if (!broadcasts_to(c.shape(2), c.shape(1)))
    c.fail("y " + c.s(2) + " does not broadcast to x " + c.s(1));
  return {c.shape(1), DType::kF32};
}

// Inputs that hold integer ids or labels (the op's own check names them); every other is f32.
bool takes_i32(OpKind op, size_t i) {
  switch (op) {
    case OpKind::kSoftmaxCrossEntropy:
    case OpKind::kSoftmaxCrossEntropyGrad:
    case OpKind::kEmbedding:
    case OpKind::kEmbeddingGrad:
      return i == 1;
    case OpKind::kEmbeddingBag:
      return i == 0 || i == 1;
    case OpKind::kEmbeddingBagGrad:
      return i == 1 || i == 2;
    default:
      return false;
  }
}

}  // namespace

int64_t window_out_size(int64_t in, int64_t k, int stride, int pad) {
  const int64_t span = in + 2 * static_cast<int64_t>(pad) - k;
  return span < 0 ? 0 : span / stride + 1;
}

InferredType infer_type(OpKind op, const std::vector<const Value*>& inputs, const Attrs& a) {
  const Ctx c{op, inputs};
  if (static_cast<int>(inputs.size()) != op_info(op).arity)
    c.fail("expects " + std::to_string(op_info(op).arity) + " inputs, got " +
           std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (takes_i32(op, i) || op == OpKind::kReshape) continue;  // reshape keeps any dtype
    c.f32(static_cast<int>(i), ("input " + std::to_string(i)).c_str());
  }
  if (is_unary_elementwise(op)) return {c.shape(0), DType::kF32};
  switch (op) {
    case OpKind::kMatMul:
      return infer_matmul(c);
    case OpKind::kAdd:
      return infer_add(c);
    case OpKind::kRelu:
      return {c.shape(0), DType::kF32};
    case OpKind::kReluGrad:
      return infer_same(c, "dy", "x");
    case OpKind::kSoftmaxCrossEntropy:
      return infer_sce(c, false);
    case OpKind::kSoftmaxCrossEntropyGrad:
      return infer_sce(c, true);
    case OpKind::kConv2D:
      return infer_conv(c, a);
    case OpKind::kConv2DInputGrad:
      return infer_conv_input_grad(c, a);
    case OpKind::kConv2DWeightGrad:
      return infer_conv_weight_grad(c, a);
    case OpKind::kMaxPool2D:
      return infer_pool(c, a);
    case OpKind::kMaxPool2DGrad:
      return infer_pool_grad(c, a);
    case OpKind::kReshape:
      return infer_reshape(c, a);
    case OpKind::kTranspose:
      c.rank(0, 2, "x");
      return {{c.shape(0)[1], c.shape(0)[0]}, DType::kF32};
    case OpKind::kReduceRows:
      return infer_reduce_rows(c);
    case OpKind::kOnesLike:
      return {c.shape(0), DType::kF32};
    case OpKind::kEmbedding:
      return infer_embedding(c);
    case OpKind::kEmbeddingGrad:
      return infer_embedding_grad(c, a);
    case OpKind::kEmbeddingBag:
      return infer_embedding_bag(c, a);
    case OpKind::kEmbeddingBagGrad:
      return infer_embedding_bag_grad(c, a);
    case OpKind::kLayerNorm:
      check_layer_norm(c, 0, 1, 2, a);
      return {c.shape(0), DType::kF32};
    case OpKind::kLayerNormGrad:
      infer_same(c, "dy", "x");
      check_layer_norm(c, 1, 2, -1, a);
      return {c.shape(1), DType::kF32};
    case OpKind::kLayerNormGainGrad:
      return infer_layer_norm_gain_grad(c, a);
    case OpKind::kBatchNorm:
      check_channels(c, 0, 1);
      return {c.shape(0), DType::kF32};
    case OpKind::kChannelSquares:
      return {check_channels(c, 0, 1), DType::kF32};
    case OpKind::kChannelDot:
      return {check_channels(c, 1, 2), DType::kF32};
    case OpKind::kBatchNormGrad:
      check_channels(c, 1, 2);
      return {c.shape(1), DType::kF32};
    case OpKind::kGelu:
    case OpKind::kScale:
      return {c.shape(0), DType::kF32};
    case OpKind::kGeluGrad:
      return infer_same(c, "dy", "x");
    case OpKind::kSoftmax:
      return infer_softmax(c, a);
    case OpKind::kSoftmaxGrad:
      return infer_same(c, "dy", "y");
    case OpKind::kBatchMatMul:
      return infer_batch_matmul(c, a);
    case OpKind::kPermute:
      return infer_permute(c, a);
    case OpKind::kMul:
      return infer_add(c);
    case OpKind::kDropout:
      return infer_dropout(c, a);
    case OpKind::kSelect:
      return infer_select(c, c.shape(0), a);
    case OpKind::kSelectGrad:
      return infer_select_grad(c, a);
    case OpKind::kBroadcast:
      return infer_broadcast(c, a, false);
    case OpKind::kSumTo:
      return infer_broadcast(c, a, true);
    case OpKind::kSlice:
      check_slice(c, c.shape(0), a);
      return {a.shape, DType::kF32};
    case OpKind::kSliceGrad:
      check_slice(c, a.x_shape, a);
      if (c.shape(0) != a.shape)
        c.fail("dy " + c.s(0) + " is not the slice's shape " + shape_str(a.shape));
      return {a.x_shape, DType::kF32};
    case OpKind::kConcat:
      return infer_concat(c, a);
    case OpKind::kPad:
      return infer_pad(c, a);
    case OpKind::kReduceMax:
      return infer_broadcast(c, a, true);
    case OpKind::kReduceMaxGrad:
      return infer_reduce_max_grad(c);
    default:  // the unary element-wise ops, handled above
      break;
  }
  c.fail("no shape rule");
}

}  // namespace tessera::graph
