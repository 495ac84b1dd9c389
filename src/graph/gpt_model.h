// The `gpt` model: a GPT-2-style pre-LayerNorm decoder over bytes, built as a forward graph with
// its loss (the same Model record as the layer-list models of model.h).
//
// Graph for `batch` windows of T = context bytes, d = d_model, H heads of dh = d / H:
//   x = embedding(tok [256, d], ids) + pos [T, d]                            [B, T, d]
//   per block l (parameters "block<l>.<name>"):
//     qkv = Linear(d, 3d)(ln1(x)) -> reshape [B, T, 3, H, dh] -> permute [3, B, H, T, dh];
//     q, k, v = select 0, 1, 2                                              [B, H, T, dh]
//     a = softmax_causal(scale(q k^T, 1/sqrt(dh))) v -> permute [B, T, H, dh] -> [B*T, d]
//     x += Linear(d, d)(a)                                 ("attn.qkv", "attn.proj")
//     x += Linear(4d, d)(gelu(Linear(d, 4d)(ln2(x))))     ("mlp.fc", "mlp.proj")
//   logits = Linear(d, 256)(ln_f(x)) as [B*T, 256] ("head", not tied to tok)
//   loss = softmax_cross_entropy(logits, labels [B*T]) (mean nats per byte)
// A Linear(n, m) is a matmul by "<name>.w" [n, m] plus the bias "<name>.b" [m]; a LayerNorm
// has "<name>.gain" and "<name>.bias" [d] and eps 1e-5. Values: input "x" (i32 [B, T]),
// labels "labels" (i32 [B*T]: the next byte at every position), "logits", "loss".
#pragma once

#include <cstdint>
#include <vector>

#include "graph/model.h"

namespace tessera::graph {

inline constexpr int kGptVocabulary = 256;  // bytes
inline constexpr double kGptLayerNormEps = 1e-5;

struct GptSpec {
  int d_model = 128;
  int heads = 4;
  int layers = 2;
  int context = 64;
};

// Throws Error "model 'gpt'": <why> for sizes < 1 or heads not dividing d_model.
Model build_gpt(const GptSpec& spec, int batch);

// Linear and embedding weights ~ N(0, 0.02), biases 0, LayerNorm gains 1 and biases 0.
// Generator: one SplitMix64(seed); parameters in graph order, elements row-major; each normal
// draw is Box-Muller on two draws, z = sqrt(-2 ln(1 - unit53())) * cos(2 pi unit53()), in
// double, then x = f32(0.02 z).
std::vector<std::vector<float>> init_gpt_params(const Model& m, uint64_t seed);

}  // namespace tessera::graph
