// The rows of the standard workload suite (`tessera bench suite`): each row is one inference
// workload, named as the suite's JSON spells it:
//   gemm_N                      C[N, N] = A[N, N] x B[N, N]
//   conv_BxHxWxCinxCoutxKxSxP   y = conv2d(x[B, H, W, Cin], w[K, K, Cin, Cout]), stride S, zero
//                               padding P on each side (NHWC, HWIO, no bias)
//   layernorm_RxD               LayerNorm over the rows of [R, D]
//   softmax_RxC                 softmax along the last axis of [R, C]
//   attention_HxSxD             q, k, v [H, S, D]: scores = k q^T / sqrt(D), p = softmax over the
//                               key axis, out = v^T p
//   resnet18, resnet50          torchvision's ResNet, batch 1, 3 x 224 x 224, batch
//                               normalisation folded (graph/resnet_model.h)
//   resnetDxIxW                 the same of depth D (18, 50) on I x I images, base width W
//   bert_D                      one encoder block on [512, D] with D / 64 heads
// standard_rows() is the suite in its order; parse_row() reads any name of these forms, so tests
// and users can run other shapes of the same workloads.
#pragma once

#include <string>
#include <vector>

namespace tessera::suite {

enum class RowKind { kGemm, kConv, kLayerNorm, kSoftmax, kAttention, kResNet, kBert };

struct Row {
  RowKind kind = RowKind::kGemm;
  // The numbers of the name in its order: gemm {N}; conv {B, H, W, Cin, Cout, K, S, P};
  // layernorm {R, D}; softmax {R, C}; attention {H, S, D}; resnet {depth} or {depth, image, width};
  // bert {D}.
  std::vector<int> dims;

  std::string name() const;
};

// Reads a row name; Error naming it and the accepted forms when it is none of them (or a number
// is not positive, a padding aside, or a convolution's window does not fit its padded input).
Row parse_row(const std::string& name);

// The suite: GEMM n = 256..2048; the four ResNet-stage convolutions at B = 1 and 64; LayerNorm
// over [R, 768] and softmax over [R, R] for R = 512, 2048, 8192; attention (12|16|32) x 512 x 64;
// ResNet-18 and -50; BERT blocks d = 768, 1024, 2048.
std::vector<Row> standard_rows();

}  // namespace tessera::suite
