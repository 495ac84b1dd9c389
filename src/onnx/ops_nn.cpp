// Converters of the ONNX neural-network ops: Conv, MaxPool, AveragePool, GlobalAveragePool,
// BatchNormalization (inference: folded into a per-channel scale and shift; training mode:
// batch_norm_training.h) and LayerNormalization. ONNX images are NCHW and kernels OIHW; the
// graph's are NHWC and HWIO, so a 2-D convolution or pooling runs between two permutes
// (consecutive ones cancel, context.h) and a constant kernel is transposed on the host.
#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx/batch_norm_training.h"
#include "onnx/fold.h"
#include "onnx/op_table.h"

namespace tessera::onnx_import {

namespace {

using graph::OpKind;
using graph::Shape;

const Shape kToNhwc{0, 2, 3, 1};
const Shape kToNchw{0, 3, 1, 2};

// The geometry of a 2-D window op with kernel kh x kw: one stride for H and W, a dilation per
// dim, and the pads before and after H and W (auto_pad resolved for input [.., H, W]).
struct Window {
  int stride = 1;
  int64_t dh = 1, dw = 1;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  bool symmetric() const { return top == left && top == bottom && top == right; }
};

Window window_attrs(Context& c, const Shape& x, int64_t kh, int64_t kw) {
  const std::vector<int64_t> strides = c.attr_ints("strides", {1, 1});
  const std::vector<int64_t> dilations = c.attr_ints("dilations", {1, 1});
  std::vector<int64_t> pads = c.attr_ints("pads", {0, 0, 0, 0});
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1)
    c.unsupported("strides " + graph::shape_str(strides) +
                  " (one stride for H and W is supported)");
  if (dilations.size() != 2 || dilations[0] < 1 || dilations[1] < 1)
    c.unsupported("dilations " + graph::shape_str(dilations));
  if (pads.size() != 4) c.unsupported("pads " + graph::shape_str(pads) + " (4 values for 2-D)");
  Window w{static_cast<int>(strides[0]), dilations[0], dilations[1]};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int d : {0, 1}) {  // the output is ceil(in / stride)
      const int64_t in = x[static_cast<size_t>(2 + d)];
      const int64_t span = (d == 0 ? kh - 1 : kw - 1) * dilations[static_cast<size_t>(d)] + 1;
      const int64_t total =
          std::max<int64_t>(((in + w.stride - 1) / w.stride - 1) * w.stride + span - in, 0);
      const int64_t small = total / 2;
      pads[static_cast<size_t>(d)] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[static_cast<size_t>(d + 2)] = total - pads[static_cast<size_t>(d)];
    }
  } else if (auto_pad == "VALID") {
    pads.assign(4, 0);
  } else if (auto_pad != "NOTSET") {
    c.unsupported("auto_pad " + auto_pad);
  }
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
    c.unsupported("negative pads " + graph::shape_str(pads));
  w.top = pads[0];
  w.left = pads[1];
  w.bottom = pads[2];
  w.right = pads[3];
  return w;
}

void need_rank4(Context& c, const Shape& s) {
  if (s.size() != 4)
    c.unsupported("input " + graph::shape_str(s) + " is not a 2-D image batch NCHW");
}

// x [N, H, W, C] padded by the window's pads with `fill` (no node without pads).
int pad_nhwc(Context& c, int x, const Window& w, double fill) {
  if (w.top == 0 && w.left == 0 && w.bottom == 0 && w.right == 0) return x;
  Shape out = c.graph().value(x).shape;
  out[1] += w.top + w.bottom;
  out[2] += w.left + w.right;
  return c.emit(OpKind::kPad, {x}, graph::Attrs::padded(out, {0, w.top, w.left, 0}, fill));
}

// A constant OIHW kernel as HWIO with zeros between its taps for dilations (dh, dw).
Tensor dilated_hwio(const Tensor& oihw, int64_t dh, int64_t dw) {
  const Tensor hwio = fold::transpose(oihw, {2, 3, 1, 0});
  if (dh == 1 && dw == 1) return hwio;
  const Shape& s = hwio.shape;
  Tensor out;
  out.shape = {(s[0] - 1) * dh + 1, (s[1] - 1) * dw + 1, s[2], s[3]};
  out.f.assign(static_cast<size_t>(graph::num_elements(out.shape)), 0.0);
  const int64_t io = s[2] * s[3];
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      std::copy_n(hwio.f.begin() + (i * s[1] + j) * io, io,
                  out.f.begin() + (i * dh * out.shape[1] + j * dw) * io);
  return out;
}

// conv2d of x [N, H, W, Ci] by the HWIO kernel of group g (its input channels of x, its output
// channels of the kernel).
int group_conv(Context& c, int x, int kernel, const Shape& k, int64_t g, int64_t groups,
               const Window& w, int pad) {
  if (groups == 1) return c.emit(OpKind::kConv2D, {x, kernel}, graph::Attrs::conv(w.stride, pad));
  const Shape xs = c.graph().value(x).shape;
  const int64_t ci = k[2], co = k[3] / groups;
  const int xg =
      c.emit(OpKind::kSlice, {x},
             graph::Attrs::slice({xs[0], xs[1], xs[2], ci}, {0, 0, 0, g * ci}, {1, 1, 1, 1}));
  const int kg = c.emit(OpKind::kSlice, {kernel},
                        graph::Attrs::slice({k[0], k[1], ci, co}, {0, 0, 0, g * co}, {1, 1, 1, 1}));
  return c.emit(OpKind::kConv2D, {xg, kg}, graph::Attrs::conv(w.stride, pad));
}

// The kh x kw taps of a window op over x [N, H, W, C] (already padded): for tap (i, j) the
// strided slice [N, OH, OW, C] of the elements it reads, row-major over the taps.
std::vector<int> window_taps(Context& c, int x, int64_t kh, int64_t kw, const Window& w) {
  const Shape xs = c.graph().value(x).shape;
  const int64_t eh = (kh - 1) * w.dh + 1, ew = (kw - 1) * w.dw + 1;
  const Shape out{xs[0], (xs[1] - eh) / w.stride + 1, (xs[2] - ew) / w.stride + 1, xs[3]};
  std::vector<int> taps;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      taps.push_back(
          c.emit(OpKind::kSlice, {x},
                 graph::Attrs::slice(out, {0, i * w.dh, j * w.dw, 0}, {1, w.stride, w.stride, 1})));
  return taps;
}

// A depthwise convolution (one kernel per channel, HWIO kernel [KH, KW, 1, C]) of the padded x:
// the sum over the taps of each tap's slice times its per-channel weights.
int depthwise_conv(Context& c, int x, int kernel, const Window& w) {
  const Shape k = c.graph().value(kernel).shape;
  const std::vector<int> taps = window_taps(c, x, k[0], k[1], w);
  int y = -1;
  for (int64_t t = 0; t < static_cast<int64_t>(taps.size()); ++t) {
    const int tap_w =
        c.emit(OpKind::kSlice, {kernel},
               graph::Attrs::slice({1, 1, 1, k[3]}, {t / k[1], t % k[1], 0, 0}, {1, 1, 1, 1}));
    const int term = c.emit(OpKind::kMul, {taps[static_cast<size_t>(t)], c.reshape(tap_w, {k[3]})});
    y = y < 0 ? term : c.emit(OpKind::kAdd, {y, term});
  }
  return y;
}

// Conv: a depthwise convolution (group = input channels = output channels) as window taps;
// other groups as per-group convolutions concatenated over channels; dilations (not depthwise)
// as a kernel with zeros between its taps (constant kernels); pads that differ per side as a pad
// node.
void convert_conv(Context& c) {
  need_rank4(c, c.shape(0));
  const Shape w = c.shape(1);
  if (w.size() != 4) c.unsupported("kernel " + graph::shape_str(w) + " is not OIHW");
  const int64_t groups = c.attr_int("group", 1);
  if (groups < 1 || c.shape(0)[1] != w[1] * groups || w[0] % groups != 0)
    c.unsupported("group " + std::to_string(groups) + " with input " +
                  graph::shape_str(c.shape(0)) + " and kernel " + graph::shape_str(w));
  const bool depthwise = groups > 1 && w[1] == 1 && w[0] == groups;
  const Window win = window_attrs(c, c.shape(0), w[2], w[3]);
  const bool dilate = !depthwise && (win.dh != 1 || win.dw != 1);
  int kernel = -1;
  if (c.is_constant(1)) {
    const Tensor hwio = dilate ? dilated_hwio(c.constant(1), win.dh, win.dw)
                               : fold::transpose(c.constant(1), {2, 3, 1, 0});
    kernel = c.derived(1, c.node().input(1), hwio, !dilate);
  } else if (!dilate) {
    kernel = c.permute(c.value(1), {2, 3, 1, 0});
  } else {
    c.unsupported("dilations of a kernel that is not a constant");
  }
  const Shape k = c.graph().value(kernel).shape;
  int x = c.permute(c.value(0), kToNhwc);
  const int pad = win.symmetric() && !depthwise ? static_cast<int>(win.top) : 0;
  if (pad == 0) x = pad_nhwc(c, x, win, 0.0);
  int y = -1;
  if (depthwise) {
    y = depthwise_conv(c, x, kernel, win);
  } else {
    y = group_conv(c, x, kernel, k, 0, groups, win, pad);
    for (int64_t g = 1; g < groups; ++g)
      y = c.emit(OpKind::kConcat, {y, group_conv(c, x, kernel, k, g, groups, win, pad)},
                 graph::Attrs::concat(3));
  }
  if (c.has_input(2)) y = c.emit(OpKind::kAdd, {y, c.value(2)});
  c.set_output(0, c.permute(y, kToNchw));
}

// The pooling window of MaxPool and AveragePool: a square kernel, and with ceil_mode the extra
// bottom / right pad that gives the partial windows (a window starting in the padding is
// dropped, as PyTorch does).
Window pool_window(Context& c, int64_t& kernel) {
  need_rank4(c, c.shape(0));
  const std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (k.size() != 2 || k[0] != k[1])
    c.unsupported("kernel_shape " + graph::shape_str(k) + " (square only)");
  kernel = k[0];
  const Shape s = c.shape(0);
  Window win = window_attrs(c, s, k[0], k[1]);
  if (win.dh != 1 || win.dw != 1)
    c.unsupported("dilations [" + std::to_string(win.dh) + ", " + std::to_string(win.dw) +
                  "] (only 1)");
  if (c.attr_int("ceil_mode", 0) != 0)
    for (int d : {0, 1}) {
      int64_t& before = d == 0 ? win.top : win.left;
      int64_t& after = d == 0 ? win.bottom : win.right;
      const int64_t span = s[static_cast<size_t>(2 + d)] + before + after - kernel;
      int64_t out = (span + win.stride - 1) / win.stride + 1;
      if ((out - 1) * win.stride >= s[static_cast<size_t>(2 + d)] + before) --out;
      after += std::max<int64_t>((out - 1) * win.stride - span, 0);
    }
  return win;
}

void convert_maxpool(Context& c) {
  if (c.num_outputs() > 1 && !c.node().output(1).empty()) c.unsupported("the Indices output");
  if (c.attr_int("storage_order", 0) != 0) c.unsupported("storage_order 1");
  int64_t k = 0;
  const Window win = pool_window(c, k);
  const int x = pad_nhwc(c, c.permute(c.value(0), kToNhwc), win,
                         static_cast<double>(std::numeric_limits<float>::lowest()));
  const int y =
      c.emit(OpKind::kMaxPool2D, {x}, graph::Attrs::pool(static_cast<int>(k), win.stride));
  c.set_output(0, c.permute(y, kToNchw));
}

// The sum of the k x k window taps (strided slices of the zero-padded input), divided by the
// window's size, or with count_include_pad 0 by the number of its elements inside the input.
void convert_average_pool(Context& c) {
  int64_t k = 0;
  const Window win = pool_window(c, k);
  const Shape s = c.shape(0);
  const int x = pad_nhwc(c, c.permute(c.value(0), kToNhwc), win, 0.0);
  int y = -1;
  for (int tap : window_taps(c, x, k, k, win)) y = y < 0 ? tap : c.emit(OpKind::kAdd, {y, tap});
  const Shape out = c.graph().value(y).shape;
  // Per output position, the window's elements inside the input (with count_include_pad, inside
  // the input and the pads the attribute gave, not those ceil_mode added).
  const bool include_pad = c.attr_int("count_include_pad", 0) != 0;
  const std::vector<int64_t> given = c.attr_ints("pads", {0, 0, 0, 0});
  auto inside = [&](int64_t o, int64_t before, int64_t in, int d) {
    const int64_t lo = include_pad ? -given[static_cast<size_t>(d)] : 0;
    const int64_t hi = include_pad ? in + given[static_cast<size_t>(d + 2)] : in;
    const int64_t start = o * win.stride - before;
    return std::max<int64_t>(std::min(start + k, hi) - std::max(start, lo), 0);
  };
  std::vector<float> inverse;
  bool uniform = true;
  for (int64_t oh = 0; oh < out[1]; ++oh)
    for (int64_t ow = 0; ow < out[2]; ++ow) {
      const int64_t n = inside(oh, win.top, s[2], 0) * inside(ow, win.left, s[3], 1);
      uniform = uniform && n == k * k;
      inverse.insert(inverse.end(), static_cast<size_t>(out[3]), 1.0f / static_cast<float>(n));
    }
  if (uniform) {
    c.set_output(0, c.permute(c.scale(y, 1.0 / static_cast<double>(k * k)), kToNchw));
    return;
  }
  const int counts = c.constant_value(c.node().output(0) + ".inverse_count",
                                      {out[1], out[2], out[3]}, std::move(inverse));
  c.set_output(0, c.permute(c.emit(OpKind::kMul, {y, counts}), kToNchw));
}

// The mean over H, W of x [N, C, H, W]: rows of H*W times a constant column of 1/(H*W).
void convert_global_average_pool(Context& c) {
  const int x = c.value(0);  // a graph value: every dim >= 1
  const Shape s = c.graph().value(x).shape;
  if (s.size() < 3) c.unsupported("input " + graph::shape_str(s) + " has no spatial dims");
  const int64_t rows = s[0] * s[1], hw = graph::num_elements(s) / rows;
  fold::check_fold_size({hw});
  const int ones =
      c.constant_value(c.node().name() + ".mean", {hw, 1},
                       std::vector<float>(static_cast<size_t>(hw), 1.0f / static_cast<float>(hw)));
  const int y = c.emit(OpKind::kMatMul, {c.reshape(x, {rows, hw}), ones});
  Shape out(s.size(), 1);
  out[0] = s[0];
  out[1] = s[1];
  c.set_output(0, c.reshape(y, out));
}

// y = x * s + t per channel (axis 1), s = scale / sqrt(var + eps), t = bias - mean * s.
void convert_batch_norm(Context& c) {
  if (c.attr_int("training_mode", 0) != 0 && c.opset() >= 14) {
    convert_batch_norm_training(c);
    return;
  }
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
  y = c.emit(OpKind::kMul, {y, c.constant_value(name + ".scale", {ch}, s)});
  y = c.emit(OpKind::kAdd, {y, c.constant_value(name + ".shift", {ch}, t)});
  c.set_output(0, c.permute(y, inverse_permutation(perm)));
}

// LayerNormalization's Mean and InvStdDev outputs (x's dims before axis, then ones) from the rows
// [R, D] it normalizes: mean = sum / D, InvStdDev = 1 / sqrt(sum of (x - mean)^2 / D + eps).
void set_layer_norm_statistics(Context& c, int rows, const Shape& x, int64_t axis) {
  const Shape r = c.graph().value(rows).shape;
  const double inv_d = 1.0 / static_cast<double>(r[1]);
  Shape stat(x.begin(), x.begin() + axis);
  stat.resize(x.size(), 1);
  auto row_mean = [&](int v) {
    return c.scale(c.emit(OpKind::kSumTo, {v}, graph::Attrs::reshape({r[0], 1})), inv_d);
  };
  const int mean = row_mean(rows);
  c.set_output(1, c.reshape(mean, stat));
  if (c.num_outputs() < 3 || c.node().output(2).empty()) return;
  const int centered =
      c.emit(OpKind::kAdd,
             {rows, c.scale(c.emit(OpKind::kBroadcast, {mean}, graph::Attrs::reshape(r)), -1.0)});
  const int var = row_mean(c.emit(OpKind::kMul, {centered, centered}));
  const int eps = c.constant_value(c.node().output(0) + ".eps", {1},
                                   {static_cast<float>(c.attr_float("epsilon", 1e-5))});
  const int inv_std = c.elementwise(OpKind::kReciprocal,
                                    c.elementwise(OpKind::kSqrt, c.emit(OpKind::kAdd, {var, eps})));
  c.set_output(2, c.reshape(inv_std, stat));
}

// Normalizes over the dims from `axis` on: rows of their product, gain and bias flattened.
void convert_layer_norm(Context& c) {
  const int xv = c.value(0);  // a graph value: every dim >= 1
  const Shape x = c.graph().value(xv).shape;
  const int64_t axis = c.axis(c.attr_int("axis", -1), static_cast<int64_t>(x.size()));
  const int64_t d = graph::num_elements(Shape(x.begin() + axis, x.end()));
  fold::check_fold_size({d});
  auto row_param = [&](int i, float fill) {
    if (!c.has_input(i))
      return c.constant_value(c.node().output(0) + ".bias", {d},
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
  if (c.num_outputs() > 1) set_layer_norm_statistics(c, rows, x, axis);
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t["Conv"] = {convert_conv, nullptr};
  t["MaxPool"] = {convert_maxpool, nullptr};
  t["AveragePool"] = {convert_average_pool, nullptr};
  t["GlobalAveragePool"] = {convert_global_average_pool, nullptr};
  t["BatchNormalization"] = {convert_batch_norm, nullptr};
  t["LayerNormalization"] = {convert_layer_norm, nullptr};
}

}  // namespace tessera::onnx_import
