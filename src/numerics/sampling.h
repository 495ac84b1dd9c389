// Choosing the next token from a row of logits, defined once for the simulated chip's sampling
// kernel (compiler/kernels_sample.h) and the host reference (runtime/generate.h).
//
// temperature 0: greedy, the index of the largest logit (the lowest such index on ties).
// temperature T > 0: Gumbel-max sampling over the candidates, in fp32 (every operation one
// rounding, log = numerics::eup_log):
//   candidates: the top_k largest logits (ties: the lower index first), all of them for top_k 0;
//   u_k = (float(w_k >> 8) + 0.5) * 2^-24 from the 32-bit word w_k of logit k (u in (0, 1));
//   g_k = -log(-log(u_k));  score_k = x_k * f32(1 / T) + g_k;
//   the token is the candidate of the largest score (the lowest index on ties),
// which draws token k with probability softmax(x / T)_k among the candidates (up to rounding).
// The words: draw i (the i-th sampled token, 0-based) is words [i * W, i * W + n) of the RNG
// unit's stream of the seed (numerics/philox.h), W = the words of one `rng` (sublanes x lanes).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::numerics {

struct Sampling {
  double temperature = 1.0;  // >= 0
  int top_k = 0;             // 0 (no cut) .. the vocabulary
  uint32_t seed = 0;
};

// Throws Error "sampling" on a negative or non-finite temperature, top_k outside [0, n], or n = 0.
void check_sampling(const Sampling& s, int n);

// The token chosen from `logits` with the draw's `words` (one per logit; unused when greedy).
int sample_token(const std::vector<float>& logits, const Sampling& s, const uint32_t* words);

// The n words of draw i (see above) for W words per `rng`.
std::vector<uint32_t> sampling_draw(const Sampling& s, int64_t i, int64_t words_per_rng, int n);

}  // namespace tessera::numerics
