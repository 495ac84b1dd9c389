// BatchNormalization in training mode (opset 14 and later: training_mode = 1): batch statistics
// and the running averages ONNX defines, built from graph ops so that autodiff, the host
// executors and the tensor-core lowering all apply.
//
// For x [N, C, D1, ...] (channels on axis 1), per channel over the R = N * D1 * ... elements:
//   mean = sum(x) / R,  var = sum((x - mean)^2) / R  (the population variance),
//   y = (x - mean) / sqrt(var + epsilon) * scale + B,
//   running_mean = input_mean * momentum + mean * (1 - momentum)   (output 1),
//   running_var = input_var * momentum + var * (1 - momentum)      (output 2).
// momentum defaults to 0.9 and is ONNX's: PyTorch's momentum m exports as 1 - m. PyTorch updates
// its running_var with the unbiased variance (R / (R - 1) times var); ONNX, and this conversion,
// with the population variance. scale and B are graph values (trainable parameters when they are
// initializers); a constant input_mean or input_var is a graph constant.
// As graph ops: x permuted to channels last and flattened to rows [R, C]; mean and var by sum_to
// and scale; the centered rows times broadcast 1 / sqrt(var + epsilon), times scale, plus B;
// back to x's layout.
//
// With the running averages kept as state (Context::batch_norm() kTrainState or kEvalState,
// convert_batch_norm_state): input_mean and input_var are state graph inputs (Context::
// state_input) and x is normalised over channels last by graph/batch_norm.h: kTrainState from
// the batch statistics, the state's next values PyTorch's running averages (momentum 1 - the
// node's momentum, the unbiased variance: what PyTorch's training would keep); kEvalState from
// the state. Outputs 1 and 2, when the node has them, are the next running averages (kTrainState)
// or the state itself (kEvalState).
#pragma once

#include "onnx/context.h"

namespace tessera::onnx_import {

void convert_batch_norm_training(Context& c);
void convert_batch_norm_state(Context& c);

}  // namespace tessera::onnx_import
