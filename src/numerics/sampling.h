// Choosing the next token from a row of logits, defined once for every generator (the simulated
// chip's and the host reference's, runtime/generate.h).
//
// temperature 0: greedy, the index of the largest logit (the lowest such index on ties).
// temperature T > 0: the candidates are the logits in descending order (ties: lower index first),
// cut to the first top_k (top_k 0: all of them); in double, w_i = exp((x_i - x_max) / T),
// S = the sum of the w_i in candidate order, r = (word + 0.5) / 2^32 * S with `word` a uniform
// 32-bit draw; the token is the first candidate whose running sum of w exceeds r (the last
// candidate if rounding leaves none).
// The draw for the i-th generated token (0-based) is word i of the chip's RNG stream of the seed
// (numerics/philox.h).
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
int sample_token(const std::vector<float>& logits, const Sampling& s, uint32_t word);

// Word i of the RNG stream of s.seed.
uint32_t sampling_word(const Sampling& s, int64_t i);

}  // namespace tessera::numerics
