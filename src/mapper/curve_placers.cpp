// Order-based placers: random, row-major, snake, Hilbert, and the nearest-free-core helper.
#include <algorithm>
#include <numeric>

#include "mapper/placers.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

std::vector<int> first_n(const std::vector<int>& order, int n) {
  return {order.begin(), order.begin() + n};
}

// Hilbert index of (x, y) on a side x side square, side a power of two.
long long hilbert_index(int side, int x, int y) {
  long long d = 0;
  for (int s = side / 2; s > 0; s /= 2) {
    int rx = (x & s) > 0, ry = (y & s) > 0;
    d += static_cast<long long>(s) * s * ((3 * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      std::swap(x, y);
    }
  }
  return d;
}

}  // namespace

std::vector<int> place_random(const CoreProblem& pb, uint64_t seed) {
  Rng rng(seed);
  std::vector<int> cores = pb.free;
  rng.shuffle(cores);
  return first_n(cores, pb.n());
}

std::vector<int> place_row_major(const CoreProblem& pb) {
  return first_n(pb.free, pb.n());
}

std::vector<int> place_snake(const CoreProblem& pb) {
  std::vector<int> order = pb.free;
  auto key = [&](int c) {
    int x = c % pb.width, y = c / pb.width;
    return static_cast<long long>(y) * pb.width + (y % 2 ? pb.width - 1 - x : x);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  return first_n(order, pb.n());
}

std::vector<int> hilbert_order(int width, int height, const std::vector<int>& free) {
  int side = 1;
  while (side < std::max(width, height)) side *= 2;
  std::vector<int> order = free;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return hilbert_index(side, a % width, a / width) < hilbert_index(side, b % width, b / width);
  });
  return order;
}

std::vector<int> place_hilbert(const CoreProblem& pb) {
  return first_n(hilbert_order(pb.width, pb.height, pb.free), pb.n());
}

int nearest_free(const CoreProblem& pb, int target, const std::vector<char>& used) {
  int best = -1, best_d = 0;
  for (int c : pb.free) {
    if (used[c]) continue;
    int d = pb.dist(c, target);
    if (best < 0 || d < best_d) best = c, best_d = d;
  }
  return best;
}

}  // namespace tessera::mapper
