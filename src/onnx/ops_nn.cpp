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

// The geometry of a window op over the spatial dims of x [N, C, D1, ..., Dr]: per spatial dim the
// kernel, stride, dilation and the pads before and after (auto_pad resolved).
struct Window {
  Shape kernel, strides, dilations, before, after;
  size_t rank() const { return kernel.size(); }
  // The input span of one window along spatial dim d.
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  bool symmetric() const {
    for (size_t d = 0; d < rank(); ++d)
      if (before[d] != before[0] || after[d] != before[0]) return false;
    return true;
  }
  bool padded() const {
    for (size_t d = 0; d < rank(); ++d)
      if (before[d] != 0 || after[d] != 0) return true;
    return false;
  }
};

Window window_attrs(Context& c, const Shape& x, const Shape& kernel) {
  const size_t r = kernel.size();
  if (x.size() != r + 2)
    c.unsupported("input " + graph::shape_str(x) + " for a kernel of " + std::to_string(r) +
                  " spatial dims");
  const std::vector<int64_t> strides = c.attr_ints("strides", Shape(r, 1));
  const std::vector<int64_t> dilations = c.attr_ints("dilations", Shape(r, 1));
  std::vector<int64_t> pads = c.attr_ints("pads", Shape(2 * r, 0));
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (strides.size() != r ||
      std::any_of(strides.begin(), strides.end(), [](int64_t v) { return v < 1; }))
    c.unsupported("strides " + graph::shape_str(strides));
  if (dilations.size() != r ||
      std::any_of(dilations.begin(), dilations.end(), [](int64_t v) { return v < 1; }))
    c.unsupported("dilations " + graph::shape_str(dilations));
  if (pads.size() != 2 * r)
    c.unsupported("pads " + graph::shape_str(pads) + " (" + std::to_string(2 * r) + " values)");
  Window w{kernel, strides, dilations, Shape(pads.begin(), pads.begin() + static_cast<long>(r)),
           Shape(pads.begin() + static_cast<long>(r), pads.end())};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t d = 0; d < r; ++d) {  // the output is ceil(in / stride)
      const int64_t in = x[2 + d], st = w.strides[d];
      const int64_t total = std::max<int64_t>(((in + st - 1) / st - 1) * st + w.span(d) - in, 0);
      const int64_t small = total / 2;
      w.before[d] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.after[d] = total - w.before[d];
    }
  } else if (auto_pad == "VALID") {
    w.before.assign(r, 0);
    w.after.assign(r, 0);
  } else if (auto_pad != "NOTSET") {
    c.unsupported("auto_pad " + auto_pad);
  }
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
    c.unsupported("negative pads " + graph::shape_str(pads));
  return w;
}

void need_rank4(Context& c, const Shape& s) {
  if (s.size() != 4)
    c.unsupported("input " + graph::shape_str(s) + " is not a 2-D image batch NCHW");
}

// The permutation [N, C, D1, ..., Dr] -> [N, D1, ..., Dr, C] (channels last) of rank `rank`.
Shape channels_last(size_t rank) {
  Shape perm{0};
  for (size_t d = 2; d < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  return perm;
}

// x [N, D1, ..., Dr, C] padded by the window's pads with `fill` (no node without pads).
int pad_spatial(Context& c, int x, const Window& w, double fill) {
  if (!w.padded()) return x;
  Shape out = c.graph().value(x).shape, starts(out.size(), 0);
  for (size_t d = 0; d < w.rank(); ++d) {
    out[1 + d] += w.before[d] + w.after[d];
    starts[1 + d] = w.before[d];
  }
  return c.emit(OpKind::kPad, {x}, graph::Attrs::padded(out, starts, fill));
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
int group_conv(Context& c, int x, int kernel, const Shape& k, int64_t g, int64_t groups, int stride,
               int pad) {
  if (groups == 1) return c.emit(OpKind::kConv2D, {x, kernel}, graph::Attrs::conv(stride, pad));
  const Shape xs = c.graph().value(x).shape;
  const int64_t ci = k[2], co = k[3] / groups;
  const int xg =
      c.emit(OpKind::kSlice, {x},
             graph::Attrs::slice({xs[0], xs[1], xs[2], ci}, {0, 0, 0, g * ci}, {1, 1, 1, 1}));
  const int kg = c.emit(OpKind::kSlice, {kernel},
                        graph::Attrs::slice({k[0], k[1], ci, co}, {0, 0, 0, g * co}, {1, 1, 1, 1}));
  return c.emit(OpKind::kConv2D, {xg, kg}, graph::Attrs::conv(stride, pad));
}

// The taps of a window op over x [N, D1, ..., Dr, C] (already padded): for each kernel position
// (row-major over the kernel's dims) the strided slice [N, O1, ..., Or, C] of the elements it
// reads.
std::vector<int> window_taps(Context& c, int x, const Window& w) {
  const Shape xs = c.graph().value(x).shape;
  const size_t r = w.rank();
  Shape out = xs, steps(xs.size(), 1);
  for (size_t d = 0; d < r; ++d) {
    out[1 + d] = (xs[1 + d] - w.span(d)) / w.strides[d] + 1;
    steps[1 + d] = w.strides[d];
  }
  std::vector<int> taps;
  Shape at(r, 0);  // the kernel position, row-major
  for (int64_t t = 0; t < graph::num_elements(w.kernel); ++t) {
    Shape starts(xs.size(), 0);
    for (size_t d = 0; d < r; ++d) starts[1 + d] = at[d] * w.dilations[d];
    taps.push_back(c.emit(OpKind::kSlice, {x}, graph::Attrs::slice(out, starts, steps)));
    for (size_t d = r; d-- > 0;) {
      if (++at[d] < w.kernel[d]) break;
      at[d] = 0;
    }
  }
  return taps;
}

// A depthwise convolution (one kernel per channel, HWIO kernel [KH, KW, 1, C]) of the padded x:
// the sum over the taps of each tap's slice times its per-channel weights.
int depthwise_conv(Context& c, int x, int kernel, const Window& w) {
  const Shape k = c.graph().value(kernel).shape;
  const std::vector<int> taps = window_taps(c, x, w);
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
  const Window win = window_attrs(c, c.shape(0), {w[2], w[3]});
  if (win.strides[0] != win.strides[1])
    c.unsupported("strides " + graph::shape_str(win.strides) +
                  " (one stride for H and W is supported)");
  const int stride = static_cast<int>(win.strides[0]);
  const int64_t dh = win.dilations[0], dw = win.dilations[1];
  const bool dilate = !depthwise && (dh != 1 || dw != 1);
  int kernel = -1;
  if (c.is_constant(1)) {
    const Tensor hwio =
        dilate ? dilated_hwio(c.constant(1), dh, dw) : fold::transpose(c.constant(1), {2, 3, 1, 0});
    kernel = c.derived(1, c.node().input(1), hwio, !dilate);
  } else if (!dilate) {
    kernel = c.permute(c.value(1), {2, 3, 1, 0});
  } else {
    c.unsupported("dilations of a kernel that is not a constant");
  }
  const Shape k = c.graph().value(kernel).shape;
  int x = c.permute(c.value(0), kToNhwc);
  const int pad = win.symmetric() && !depthwise ? static_cast<int>(win.before[0]) : 0;
  if (pad == 0) x = pad_spatial(c, x, win, 0.0);
  int y = -1;
  if (depthwise) {
    y = depthwise_conv(c, x, kernel, win);
  } else {
    y = group_conv(c, x, kernel, k, 0, groups, stride, pad);
    for (int64_t g = 1; g < groups; ++g)
      y = c.emit(OpKind::kConcat, {y, group_conv(c, x, kernel, k, g, groups, stride, pad)},
                 graph::Attrs::concat(3));
  }
  if (c.has_input(2)) y = c.emit(OpKind::kAdd, {y, c.value(2)});
  c.set_output(0, c.permute(y, kToNchw));
}

// The pooling window of MaxPool and AveragePool over x [N, C, D1, ..., Dr], and with ceil_mode
// the extra pad after each dim that gives the partial windows (a window starting in the padding
// is dropped, as PyTorch does).
Window pool_window(Context& c) {
  const Shape s = c.shape(0);
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.empty() || std::any_of(kernel.begin(), kernel.end(), [](int64_t k) { return k < 1; }))
    c.unsupported("kernel_shape " + graph::shape_str(kernel));
  Window win = window_attrs(c, s, kernel);
  if (c.attr_int("ceil_mode", 0) != 0)
    for (size_t d = 0; d < win.rank(); ++d) {
      const int64_t st = win.strides[d];
      const int64_t span = s[2 + d] + win.before[d] + win.after[d] - win.span(d);
      int64_t out = (span + st - 1) / st + 1;
      if ((out - 1) * st >= s[2 + d] + win.before[d]) --out;
      win.after[d] += std::max<int64_t>((out - 1) * st - span, 0);
    }
  return win;
}

// MaxPool: maxpool2d for a square 2-D kernel with one stride and no dilation; any other window
// (1-D, 3-D, rectangular, dilated, strides per dim): the taps stacked along a new first axis
// and reduce_max over it (the first maximum in the kernel's row-major order, as maxpool2d).
// Padding is -inf.
void convert_maxpool(Context& c) {
  if (c.num_outputs() > 1 && !c.node().output(1).empty()) c.unsupported("the Indices output");
  if (c.attr_int("storage_order", 0) != 0) c.unsupported("storage_order 1");
  const Window win = pool_window(c);
  const size_t rank = c.shape(0).size();
  const Shape perm = channels_last(rank);
  const int x =
      pad_spatial(c, c.permute(c.value(0), perm), win, -std::numeric_limits<double>::infinity());
  int y = -1;
  if (win.rank() == 2 && win.kernel[0] == win.kernel[1] && win.strides[0] == win.strides[1] &&
      win.dilations[0] == 1 && win.dilations[1] == 1) {
    y = c.emit(
        OpKind::kMaxPool2D, {x},
        graph::Attrs::pool(static_cast<int>(win.kernel[0]), static_cast<int>(win.strides[0])));
  } else {
    const std::vector<int> taps = window_taps(c, x, win);
    const Shape out = c.graph().value(taps[0]).shape;
    Shape one{1};
    one.insert(one.end(), out.begin(), out.end());
    y = taps[0];
    if (taps.size() > 1) {
      int stacked = c.reshape(taps[0], one);
      for (size_t t = 1; t < taps.size(); ++t)
        stacked =
            c.emit(OpKind::kConcat, {stacked, c.reshape(taps[t], one)}, graph::Attrs::concat(0));
      y = c.reshape(c.emit(OpKind::kReduceMax, {stacked}, graph::Attrs::reshape(one)), out);
    }
  }
  c.set_output(0, c.permute(y, inverse_permutation(perm)));
}

// The sum of the window's taps (strided slices of the zero-padded input), divided by the
// window's size, or with count_include_pad 0 by the number of its elements inside the input.
void convert_average_pool(Context& c) {
  const Window win = pool_window(c);
  const Shape s = c.shape(0);
  const Shape perm = channels_last(s.size());
  const int x = pad_spatial(c, c.permute(c.value(0), perm), win, 0.0);
  int y = -1;
  for (int tap : window_taps(c, x, win)) y = y < 0 ? tap : c.emit(OpKind::kAdd, {y, tap});
  const Shape out = c.graph().value(y).shape;
  const size_t r = win.rank();
  const int64_t size = graph::num_elements(win.kernel);
  // Per output position, the window's elements inside the input (with count_include_pad, inside
  // the input and the pads the attribute gave, not those ceil_mode added).
  const bool include_pad = c.attr_int("count_include_pad", 0) != 0;
  const std::vector<int64_t> given = c.attr_ints("pads", Shape(2 * r, 0));
  auto inside = [&](int64_t o, size_t d) {
    const int64_t lo = include_pad ? -given[d] : 0;
    const int64_t hi = include_pad ? s[2 + d] + given[d + r] : s[2 + d];
    const int64_t start = o * win.strides[d] - win.before[d];
    return std::max<int64_t>(std::min(start + win.kernel[d], hi) - std::max(start, lo), 0);
  };
  const Shape spatial(out.begin() + 1, out.end() - 1);
  std::vector<float> inverse;
  bool uniform = true;
  Shape at(r, 0);  // the output position, row-major
  for (int64_t p = 0; p < graph::num_elements(spatial); ++p) {
    int64_t n = 1;
    for (size_t d = 0; d < r; ++d) n *= inside(at[d], d);
    uniform = uniform && n == size;
    inverse.insert(inverse.end(), static_cast<size_t>(out.back()), 1.0f / static_cast<float>(n));
    for (size_t d = r; d-- > 0;) {
      if (++at[d] < spatial[d]) break;
      at[d] = 0;
    }
  }
  if (uniform) {
    c.set_output(0,
                 c.permute(c.scale(y, 1.0 / static_cast<double>(size)), inverse_permutation(perm)));
    return;
  }
  Shape counts_shape = spatial;
  counts_shape.push_back(out.back());
  const int counts =
      c.constant_value(c.node().output(0) + ".inverse_count", counts_shape, std::move(inverse));
  c.set_output(0, c.permute(c.emit(OpKind::kMul, {y, counts}), inverse_permutation(perm)));
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
  if (c.batch_norm() != BatchNormStatistics::kAsInFile) {
    convert_batch_norm_state(c);
    return;
  }
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
