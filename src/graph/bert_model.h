// The zoo's `bert`: a BERT-style post-LayerNorm encoder stack over token ids, built as a forward
// graph with a token-classification loss (the same Model record as the other zoo models).
//
// Graph for `batch` sequences of S = seq tokens, d = d_model, H heads of dh = d / H:
//   x = embedding(tok [vocab, d], ids) + pos [S, d]                             [B, S, d] as rows
//   per layer l (parameters "layer<l>.<name>"), on rows [B*S, d]:
//     q, k, v = Linear(d, d)(x) each -> reshape [B, S, H, dh] -> permute [B, H, S, dh]
//     p = softmax(scale(q k^T, 1 / sqrt(dh)))  (no mask)                       [B, H, S, S]
//     a = p v -> permute [B, S, H, dh] -> [B*S, d]
//     r = LayerNorm(Linear(d, d)(a) + x)                     ("attn.q|k|v|o", "ln1")
//     x = LayerNorm(Linear(4d, d)(ReLU(Linear(d, 4d)(r))) + r)  ("ff1", "ff2", "ln2")
//   (each layer is the suite's bert_D encoder block, batched)
//   logits = Linear(d, vocab)(x) [B*S, vocab] ("head"); loss = softmax_cross_entropy(logits,
//   labels [B*S]).
// A Linear(n, m) is a matmul by "<name>.w" [n, m] plus "<name>.b" [m]; a LayerNorm has
// "<name>.gain" and "<name>.bias" [d], eps 1e-12 (BERT's). Values: input "x" (i32 [B, S]),
// "labels" (i32 [B*S]), "logits", "loss". init_gpt_params initialises it as BERT does
// (N(0, 0.02) weights and embeddings, biases 0, gains 1).
#pragma once

#include "graph/model.h"

namespace tessera::graph {

inline constexpr double kBertLayerNormEps = 1e-12;

struct BertSpec {
  int layers = 12;
  int d_model = 768;
  int heads = 12;
  int seq = 128;
  int vocab = 30522;
};

// Throws Error "model 'bert'": <why> for sizes < 1 or heads not dividing d_model.
Model build_bert(const BertSpec& spec, int batch);

}  // namespace tessera::graph
