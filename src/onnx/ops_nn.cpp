// Converters of the ONNX neural-network ops: Conv, MaxPool, GlobalAveragePool,
// BatchNormalization (inference: folded into a per-channel scale and shift) and
// LayerNormalization. ONNX images are NCHW and kernels OIHW; the graph's are NHWC and HWIO, so a
// 2-D convolution or pooling runs between two permutes (consecutive ones cancel, context.h) and a
// constant kernel is transposed on the host.
#include <cmath>

#include "onnx/fold.h"
#include "onnx/op_table.h"

namespace tessera::onnx_import {

namespace {

using graph::OpKind;
using graph::Shape;

const Shape kToNhwc{0, 2, 3, 1};
const Shape kToNchw{0, 3, 1, 2};

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

// The one symmetric pad and stride of a 2-D window op with kernel kh x kw, or Unsupported.
struct Window {
  int stride = 1, pad = 0;
};

Window window_attrs(Context& c, int64_t kh, int64_t kw) {
  const std::vector<int64_t> strides = c.attr_ints("strides", {1, 1});
  const std::vector<int64_t> dilations = c.attr_ints("dilations", {1, 1});
  std::vector<int64_t> pads = c.attr_ints("pads", {0, 0, 0, 0});
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1)
    c.unsupported("strides " + graph::shape_str(strides) +
                  " (one stride for H and W is supported)");
  if (!all_equal(dilations, 1))
    c.unsupported("dilations " + graph::shape_str(dilations) + " (only 1)");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (strides[0] != 1 || kh != kw || kh % 2 == 0)
      c.unsupported("auto_pad " + auto_pad + " with stride " + std::to_string(strides[0]) +
                    " and kernel " + std::to_string(kh) + "x" + std::to_string(kw) +
                    " (only stride 1 with an odd square kernel)");
    pads.assign(4, (kh - 1) / 2);
  } else if (auto_pad == "VALID") {
    pads.assign(4, 0);
  } else if (auto_pad != "NOTSET") {
    c.unsupported("auto_pad " + auto_pad);
  }
  if (pads.size() != 4 || !all_equal(pads, pads[0]))
    c.unsupported("pads " + graph::shape_str(pads) + " (one pad on every side is supported)");
  return {static_cast<int>(strides[0]), static_cast<int>(pads[0])};
}

void need_rank4(Context& c, const Shape& s) {
  if (s.size() != 4)
    c.unsupported("input " + graph::shape_str(s) + " is not a 2-D image batch NCHW");
}

void convert_conv(Context& c) {
  need_rank4(c, c.shape(0));
  const Shape w = c.shape(1);
  if (w.size() != 4) c.unsupported("kernel " + graph::shape_str(w) + " is not OIHW");
  if (c.attr_int("group", 1) != 1)
    c.unsupported("group " + std::to_string(c.attr_int("group", 1)) + " (only 1)");
  const Window win = window_attrs(c, w[2], w[3]);
  int kernel = -1;
  if (c.is_constant(1)) {
    const Tensor hwio = fold::transpose(c.constant(1), {2, 3, 1, 0});
    kernel = c.param(c.node().input(1), hwio.shape, hwio.floats());
  } else {
    kernel = c.permute(c.value(1), {2, 3, 1, 0});
  }
  const int x = c.permute(c.value(0), kToNhwc);
  int y = c.emit(OpKind::kConv2D, {x, kernel}, graph::Attrs::conv(win.stride, win.pad));
  if (c.has_input(2)) y = c.emit(OpKind::kAdd, {y, c.value(2)});
  c.set_output(0, c.permute(y, kToNchw));
}

void convert_maxpool(Context& c) {
  need_rank4(c, c.shape(0));
  const std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (k.size() != 2 || k[0] != k[1])
    c.unsupported("kernel_shape " + graph::shape_str(k) + " (square only)");
  if (c.num_outputs() > 1 && !c.node().output(1).empty()) c.unsupported("the Indices output");
  if (c.attr_int("storage_order", 0) != 0) c.unsupported("storage_order 1");
  const Window win = window_attrs(c, k[0], k[1]);
  if (win.pad != 0) c.unsupported("padding (max pooling without pads only)");
  const Shape s = c.shape(0);
  if (c.attr_int("ceil_mode", 0) != 0)
    for (int d : {2, 3})
      if ((s[static_cast<size_t>(d)] - k[0]) % win.stride != 0)
        c.unsupported("ceil_mode 1 where it adds a partial window");
  const int y = c.emit(OpKind::kMaxPool2D, {c.permute(c.value(0), kToNhwc)},
                       graph::Attrs::pool(static_cast<int>(k[0]), win.stride));
  c.set_output(0, c.permute(y, kToNchw));
}

// The mean over H, W of x [N, C, H, W]: rows of H*W times a constant column of 1/(H*W).
void convert_global_average_pool(Context& c) {
  const int x = c.value(0);  // a graph value: every dim >= 1
  const Shape s = c.graph().value(x).shape;
  if (s.size() < 3) c.unsupported("input " + graph::shape_str(s) + " has no spatial dims");
  const int64_t rows = s[0] * s[1], hw = graph::num_elements(s) / rows;
  fold::check_fold_size({hw});
  const int ones =
      c.param(c.node().name() + ".mean", {hw, 1},
              std::vector<float>(static_cast<size_t>(hw), 1.0f / static_cast<float>(hw)));
  const int y = c.emit(OpKind::kMatMul, {c.reshape(x, {rows, hw}), ones});
  Shape out(s.size(), 1);
  out[0] = s[0];
  out[1] = s[1];
  c.set_output(0, c.reshape(y, out));
}

// y = x * s + t per channel (axis 1), s = scale / sqrt(var + eps), t = bias - mean * s.
void convert_batch_norm(Context& c) {
  if (c.attr_int("training_mode", 0) != 0 || (c.num_outputs() > 1 && !c.node().output(1).empty()))
    c.unsupported("training mode (batch statistics); inference folds the running statistics");
  const Shape x = c.shape(0);
  if (x.size() < 2) c.unsupported("input " + graph::shape_str(x) + " has no channel axis");
  const double eps = c.attr_float("epsilon", 1e-5);
  const Tensor &scale = c.constant(1), &bias = c.constant(2), &mean = c.constant(3),
               &var = c.constant(4);
  const int64_t ch = x[1];
  for (const Tensor* t : {&scale, &bias, &mean, &var})
    if (t->size() != ch)
      c.unsupported("scale, bias, mean and var must hold one value per channel (" +
                    std::to_string(ch) + ")");
  std::vector<float> s(static_cast<size_t>(ch)), t(static_cast<size_t>(ch));
  for (int64_t k = 0; k < ch; ++k) {
    const double sk = scale.at(k) / std::sqrt(var.at(k) + static_cast<float>(eps));
    s[k] = static_cast<float>(sk);
    t[k] = static_cast<float>(bias.at(k) - mean.at(k) * sk);
  }
  Shape perm{0};
  for (size_t d = 2; d < x.size(); ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  const std::string& name = c.node().output(0);
  int y = c.permute(c.value(0), perm);
  y = c.emit(OpKind::kMul, {y, c.param(name + ".scale", {ch}, s)});
  y = c.emit(OpKind::kAdd, {y, c.param(name + ".shift", {ch}, t)});
  c.set_output(0, c.permute(y, inverse_permutation(perm)));
}

// Normalizes over the dims from `axis` on: rows of their product, gain and bias flattened.
void convert_layer_norm(Context& c) {
  const int xv = c.value(0);  // a graph value: every dim >= 1
  const Shape x = c.graph().value(xv).shape;
  const int64_t axis = c.axis(c.attr_int("axis", -1), static_cast<int64_t>(x.size()));
  for (int k = 1; k < c.num_outputs(); ++k)
    if (!c.node().output(k).empty()) c.unsupported("the Mean and InvStdDev outputs");
  const int64_t d = graph::num_elements(Shape(x.begin() + axis, x.end()));
  fold::check_fold_size({d});
  auto row_param = [&](int i, float fill) {
    if (!c.has_input(i))
      return c.param(c.node().output(0) + ".bias", {d},
                     std::vector<float>(static_cast<size_t>(d), fill));
    if (graph::num_elements(c.shape(i)) != d)
      c.unsupported("scale/bias " + graph::shape_str(c.shape(i)) +
                    " do not cover the normalized dims");
    return c.reshape(c.value(i), {d});
  };
  const int gain = row_param(1, 1.0f), bias = row_param(2, 0.0f);
  const int rows = c.reshape(xv, {graph::num_elements(x) / d, d});
  const int y = c.emit(OpKind::kLayerNorm, {rows, gain, bias},
                       graph::Attrs::layer_norm(c.attr_float("epsilon", 1e-5)));
  c.set_output(0, c.reshape(y, x));
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t["Conv"] = {convert_conv, nullptr};
  t["MaxPool"] = {convert_maxpool, nullptr};
  t["GlobalAveragePool"] = {convert_global_average_pool, nullptr};
  t["BatchNormalization"] = {convert_batch_norm, nullptr};
  t["LayerNormalization"] = {convert_layer_norm, nullptr};
}

}  // namespace tessera::onnx_import
