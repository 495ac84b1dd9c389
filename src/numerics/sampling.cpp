#include "numerics/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "common/error.h"
#include "numerics/eup.h"
#include "numerics/philox.h"

namespace tessera::numerics {

void check_sampling(const Sampling& s, int n) {
  if (n == 0) throw Error("sampling", "no logits");
  if (!(s.temperature >= 0) || !std::isfinite(s.temperature))
    throw Error("sampling",
                "temperature must be a finite number >= 0, got " + std::to_string(s.temperature));
  if (s.top_k < 0 || s.top_k > n)
    throw Error("sampling", "top-k must be in [0, " + std::to_string(n) + "] (0: no cut), got " +
                                std::to_string(s.top_k));
}

int sample_token(const std::vector<float>& logits, const Sampling& s, const uint32_t* words) {
  const int n = static_cast<int>(logits.size());
  check_sampling(s, n);
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  std::vector<float> score = logits;
  if (s.temperature > 0) {
    std::vector<bool> candidate(static_cast<size_t>(n), s.top_k == 0);
    if (s.top_k > 0) {
      std::vector<int> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return logits[a] > logits[b]; });
      for (int i = 0; i < s.top_k; ++i) candidate[order[i]] = true;
    }
    const float inv_t = static_cast<float>(1.0 / s.temperature);
    for (int k = 0; k < n; ++k) {
      const float u = (static_cast<float>(words[k] >> 8) + 0.5f) * 0x1p-24f;
      const float g = -eup_log(-eup_log(u));
      score[k] = candidate[k] ? logits[k] * inv_t + g : kNegInf;
    }
  }
  return static_cast<int>(std::max_element(score.begin(), score.end()) - score.begin());
}

std::vector<uint32_t> sampling_draw(const Sampling& s, int64_t i, int64_t words_per_rng, int n) {
  std::vector<uint32_t> w(static_cast<size_t>(n));
  philox_stream(s.seed, static_cast<uint64_t>(i * words_per_rng), w.data(), n);
  return w;
}

}  // namespace tessera::numerics
