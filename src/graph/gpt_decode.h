// Incremental decoding of the `gpt` model (gpt_model.h) on the host: the reference the simulated
// chip's generation is checked against, in chip numerics or fp32 (kernels.h).
//
// The decoder holds, per layer and head, the keys and values of every position fed so far (the
// KV cache, [heads][context][d_head] per layer). feed(tokens) runs the m new tokens at positions
// p0 = cached() .. p0 + m - 1 (a prefill when m > 1, one decoding step when m = 1) through the
// same per-op arithmetic as the model's graph (transformer_kernels.h), rows at a time:
//   x = tok[ids] + pos[p0 .. p0 + m)                                           [m, d]
//   per block: qkv = ln1(x) W_qkv + b -> [m, 3, H, dh] -> permute [3, H, m, dh];
//              the m new keys and values are appended to the cache of every head;
//              per head h: s = scale(q_h K_h^T, 1/sqrt(dh)) [m, T] with T = p0 + m cached
//              positions, causal softmax (row i sees positions <= p0 + i), a_h = s V_h [m, dh];
//              a = permute [H, m, dh] -> [m, H * dh]; x += a W_proj + b;
//              x += gelu(ln2(x) W_fc + b) W_proj2 + b
//   logits = ln_f(x[m - 1]) W_head + b_head                                    [256]
// Every row of a matmul, LayerNorm, GELU and of the softmax is computed exactly as in the full
// forward pass, and the last row's softmax spans the T positions of the prefix unmasked, so the
// logits of feed() equal, bit for bit, the last row of the logits of the model's inference graph
// run on the whole prefix (build_gpt with context = T and the first T rows of pos).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/gpt_model.h"
#include "graph/kernels.h"

namespace tessera::graph {

class GptDecoder {
 public:
  // params: the values of build_gpt(spec, 1).params, in that order. mode: kChip or kF32.
  // Throws Error "model 'gpt'" on a bad spec, a wrong parameter count or size.
  GptDecoder(const GptSpec& spec, std::vector<std::vector<float>> params, Numerics mode);

  // Runs `tokens` (ids in [0, 256)) at the next positions and returns the logits of the last.
  // Throws Error when they are empty or would pass the context, or on an id out of range.
  std::vector<float> feed(const std::vector<int32_t>& tokens);

  int cached() const { return m_cached; }
  // Forgets every cached position (the next feed starts at position 0).
  void reset() { m_cached = 0; }
  const GptSpec& spec() const { return m_spec; }
  // The bytes of the keys and values of n positions: 2 x layers x n x d_model x 4.
  static int64_t cache_bytes(const GptSpec& spec, int64_t n);

 private:
  const std::vector<float>& param(const std::string& name) const;
  // x [rows, n] times "<name>.w" plus "<name>.b"; LayerNorm "<name>" over rows of d_model.
  std::vector<float> linear(const std::vector<float>& x, int rows, const std::string& name) const;
  std::vector<float> layer_norm(const std::vector<float>& x, const std::string& name) const;

  GptSpec m_spec;
  Numerics m_mode;
  kernels::Matmul m_matmul;
  std::vector<std::vector<float>> m_params;
  std::vector<std::string> m_names;
  // Per layer: keys then values, [heads][context][d_head] each.
  std::vector<std::vector<float>> m_keys, m_values;
  int m_cached = 0;
};

}  // namespace tessera::graph
