#include "numerics/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "common/error.h"
#include "numerics/philox.h"

namespace tessera::numerics {

int sample_token(const std::vector<float>& logits, const Sampling& s, uint32_t word) {
  const int n = static_cast<int>(logits.size());
  if (n == 0) throw Error("sampling", "no logits");
  if (!(s.temperature >= 0) || !std::isfinite(s.temperature))
    throw Error("sampling",
                "temperature must be a finite number >= 0, got " + std::to_string(s.temperature));
  if (s.top_k < 0 || s.top_k > n)
    throw Error("sampling", "top-k must be in [0, " + std::to_string(n) + "] (0: no cut), got " +
                                std::to_string(s.top_k));
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  if (s.temperature == 0) return order[0];
  order.resize(static_cast<size_t>(s.top_k == 0 ? n : s.top_k));
  const double top = logits[order[0]];
  std::vector<double> w;
  double sum = 0;
  for (int i : order) {
    w.push_back(std::exp((static_cast<double>(logits[i]) - top) / s.temperature));
    sum += w.back();
  }
  const double r = (static_cast<double>(word) + 0.5) / 4294967296.0 * sum;
  double running = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    running += w[i];
    if (running > r) return order[i];
  }
  return order.back();
}

uint32_t sampling_word(const Sampling& s, int64_t i) {
  uint32_t w = 0;
  philox_stream(s.seed, static_cast<uint64_t>(i), &w, 1);
  return w;
}

}  // namespace tessera::numerics
