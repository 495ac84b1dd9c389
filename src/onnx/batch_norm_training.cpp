#include "onnx/batch_norm_training.h"

#include "graph/batch_norm.h"

namespace tessera::onnx_import {

using graph::OpKind;
using graph::Shape;

namespace {

// x [N, C, D1, ...] -> [N, D1, ..., C]; Unsupported unless the statistics hold C values each.
Shape channels_last_checked(Context& c) {
  const Shape x = c.shape(0);
  if (x.size() < 2) c.unsupported("input " + graph::shape_str(x) + " has no channel axis");
  for (int i = 1; i <= 4; ++i)
    if (graph::num_elements(c.shape(i)) != x[1])
      c.unsupported("scale, B, input_mean and input_var must hold one value per channel (" +
                    std::to_string(x[1]) + ")");
  Shape perm{0};
  for (size_t d = 2; d < x.size(); ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  return perm;
}

}  // namespace

void convert_batch_norm_state(Context& c) {
  const Shape perm = channels_last_checked(c);
  const int64_t ch = c.shape(0)[1];
  const double eps = c.attr_float("epsilon", 1e-5), momentum = c.attr_float("momentum", 0.9);
  const std::string& name = c.node().output(0);
  const int x = c.permute(c.value(0), perm);
  const int gamma = c.reshape(c.value(1), {ch}), beta = c.reshape(c.value(2), {ch});
  const int mean = c.state_input(3), var = c.state_input(4);
  int y = -1, next_mean = mean, next_var = var;
  try {
    if (c.batch_norm() == BatchNormStatistics::kEvalState) {
      y = graph::batch_norm_inference(c.graph(), x, gamma, beta, mean, var, eps, name + ".bn");
    } else {
      const graph::BatchStatistics b =
          graph::batch_norm_training(c.graph(), x, gamma, beta, eps, name + ".bn");
      const graph::RunningUpdate r = graph::running_averages(c.graph(), b, mean, var, 1 - momentum);
      c.set_state_update(mean, next_mean = r.mean);
      c.set_state_update(var, next_var = r.var);
      y = b.y;
    }
  } catch (const Unsupported&) {
    throw;
  } catch (const Error& e) {
    c.unsupported(e.what());
  }
  c.set_output(0, c.permute(y, inverse_permutation(perm)));
  if (c.num_outputs() > 1 && !c.node().output(1).empty()) c.set_output(1, next_mean);
  if (c.num_outputs() > 2 && !c.node().output(2).empty()) c.set_output(2, next_var);
}

void convert_batch_norm_training(Context& c) {
  const Shape x = c.shape(0);
  const Shape perm = channels_last_checked(c);
  const int64_t ch = x[1];
  const double eps = c.attr_float("epsilon", 1e-5), momentum = c.attr_float("momentum", 0.9);
  const std::string& name = c.node().output(0);
  const int last = c.permute(c.value(0), perm);
  const Shape last_shape = c.graph().value(last).shape;
  const int64_t r = graph::num_elements(x) / ch;
  const int rows = c.reshape(last, {r, ch});
  auto channel_mean = [&](int v) {  // [R, C] -> [C]
    return c.reshape(c.scale(c.emit(OpKind::kSumTo, {v}, graph::Attrs::reshape({1, ch})),
                             1.0 / static_cast<double>(r)),
                     {ch});
  };
  auto per_row = [&](int v) {  // [C] -> [R, C]
    return c.emit(OpKind::kBroadcast, {v}, graph::Attrs::reshape({r, ch}));
  };
  const int mean = channel_mean(rows);
  const int centered = c.emit(OpKind::kAdd, {rows, per_row(c.scale(mean, -1.0))});
  const int var = channel_mean(c.emit(OpKind::kMul, {centered, centered}));
  const int eps_c =
      c.constant_value(name + ".eps", {ch}, std::vector<float>(static_cast<size_t>(ch), eps));
  const int inv_std = c.elementwise(
      OpKind::kReciprocal, c.elementwise(OpKind::kSqrt, c.emit(OpKind::kAdd, {var, eps_c})));
  int y = c.emit(OpKind::kMul, {centered, per_row(inv_std)});
  y = c.emit(OpKind::kMul, {y, c.reshape(c.value(1), {ch})});
  y = c.emit(OpKind::kAdd, {y, c.reshape(c.value(2), {ch})});
  c.set_output(0, c.permute(c.reshape(y, last_shape), inverse_permutation(perm)));
  auto running = [&](int i, int batch) {  // input i * momentum + batch * (1 - momentum)
    const int in = c.is_constant(i)
                       ? c.derived(i, name + ".input_" + std::to_string(i), c.constant(i), false)
                       : c.value(i);
    return c.emit(OpKind::kAdd,
                  {c.scale(c.reshape(in, {ch}), momentum), c.scale(batch, 1.0 - momentum)});
  };
  if (c.num_outputs() > 1 && !c.node().output(1).empty()) c.set_output(1, running(3, mean));
  if (c.num_outputs() > 2 && !c.node().output(2).empty()) c.set_output(2, running(4, var));
}

}  // namespace tessera::onnx_import
