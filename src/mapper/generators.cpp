#include "mapper/generators.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/error.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

void add_nodes(LogicalGraph& g, int n, const std::string& prefix) {
  for (int i = 0; i < n; ++i) g.add_node({prefix + std::to_string(g.num_nodes())});
}

// Marks every node with more than one successor as multicast (it forwards the same output).
void mark_multicast(LogicalGraph& g) {
  LogicalGraph h;
  for (int v = 0; v < g.num_nodes(); ++v) {
    Node n = g.node(v);
    n.multicast = g.out(v).size() > 1;
    h.add_node(n);
  }
  for (const Edge& e : g.edges()) h.add_edge(e.src, e.dst, e.weight);
  g = std::move(h);
}

// `count` distinct values from [0, n), in increasing order.
std::vector<int> sample(Rng& rng, int n, int count) {
  if (count >= n) {
    std::vector<int> all(n);
    for (int i = 0; i < n; ++i) all[i] = i;
    return all;
  }
  std::set<int> s;
  while (static_cast<int>(s.size()) < count) s.insert(rng.below(n));
  return {s.begin(), s.end()};
}

}  // namespace

LogicalGraph gen_layered_mlp(const std::vector<int>& sizes, int fanout, uint64_t seed) {
  Rng rng(seed);
  LogicalGraph g;
  std::vector<int> start;
  for (int s : sizes) {
    if (s < 1) throw Error("gen mlp", "layer sizes must be >= 1");
    start.push_back(g.num_nodes());
    add_nodes(g, s, "n");
  }
  for (size_t l = 0; l + 1 < sizes.size(); ++l)
    for (int j = 0; j < sizes[l + 1]; ++j)
      for (int i : sample(rng, sizes[l], fanout))
        g.add_edge(start[l] + i, start[l + 1] + j, rng.uniform(0.5, 1.5));
  mark_multicast(g);
  return g;
}

LogicalGraph gen_conv(int side, int layers, int kernel, uint64_t seed) {
  if (side < 1 || layers < 1 || kernel < 1)
    throw Error("gen conv", "side, layers and kernel must be >= 1");
  Rng rng(seed);
  LogicalGraph g;
  add_nodes(g, side * side * layers, "p");
  int r = kernel / 2;
  for (int l = 0; l + 1 < layers; ++l)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x)
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            int sx = x + dx, sy = y + dy;
            if (sx < 0 || sy < 0 || sx >= side || sy >= side) continue;
            g.add_edge(l * side * side + sy * side + sx, (l + 1) * side * side + y * side + x,
                       rng.uniform(0.9, 1.1));
          }
  mark_multicast(g);
  return g;
}

LogicalGraph gen_tiles(const std::vector<long long>& activations, long long tile, int skip,
                       uint64_t seed) {
  if (tile < 1) throw Error("gen tiles", "tile must be >= 1");
  LogicalGraph g;
  std::vector<int> start, count;
  for (long long a : activations) {
    if (a < 1) throw Error("gen tiles", "activation volumes must be >= 1");
    start.push_back(g.num_nodes());
    count.push_back(static_cast<int>((a + tile - 1) / tile));
    add_nodes(g, count.back(), "t");
  }
  // Tile a of layer i covers [a/T_i, (a+1)/T_i) of the layer; it sends its share of the volume to
  // every tile of the target layer whose range overlaps.
  auto connect = [&](size_t i, size_t j) {
    double vol = static_cast<double>(activations[i]);
    for (int a = 0; a < count[i]; ++a)
      for (int b = 0; b < count[j]; ++b) {
        double lo = std::max(double(a) / count[i], double(b) / count[j]);
        double hi = std::min(double(a + 1) / count[i], double(b + 1) / count[j]);
        if (hi > lo + 1e-12) g.add_edge(start[i] + a, start[j] + b, vol * (hi - lo));
      }
  };
  for (size_t i = 0; i + 1 < activations.size(); ++i) {
    connect(i, i + 1);
    if (skip > 0 && i % skip == 0 && i + 2 < activations.size()) connect(i, i + 2);
  }
  (void)seed;
  mark_multicast(g);
  return g;
}

LogicalGraph gen_random_dag(int n, int layers, int deg, uint64_t seed) {
  if (n < 2 || layers < 2 || layers > n) throw Error("gen dag", "need n >= layers >= 2");
  Rng rng(seed);
  std::vector<int> cut = sample(rng, n - 1, layers - 1);
  std::vector<int> start{0};
  for (int c : cut) start.push_back(c + 1);
  start.push_back(n);
  LogicalGraph g;
  add_nodes(g, n, "d");
  for (int l = 0; l + 1 < layers; ++l)
    for (int v = start[l]; v < start[l + 1]; ++v) {
      int edges = 1 + rng.below(2 * deg);
      std::set<int> targets;
      for (int k = 0; k < edges; ++k) {
        int tl = std::min(layers - 1, l + 1 + rng.below(2));
        targets.insert(start[tl] + rng.below(start[tl + 1] - start[tl]));
      }
      for (int t : targets) g.add_edge(v, t, std::exp2(rng.uniform(0.0, 4.0)));
    }
  mark_multicast(g);
  return g;
}

LogicalGraph gen_planted(int n, int k, double p_in, double p_out, uint64_t seed) {
  if (n < 1 || k < 1 || k > n) throw Error("gen planted", "need 1 <= k <= n");
  Rng rng(seed);
  LogicalGraph g;
  add_nodes(g, n, "q");
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      double p = (i * k / n == j * k / n) ? p_in : p_out;
      if (rng.uniform() < p) g.add_edge(i, j, rng.uniform(1.0, 2.0));
    }
  mark_multicast(g);
  return g;
}

LogicalGraph gen_random(int n, double deg, uint64_t seed) {
  if (n < 2) throw Error("gen random", "need n >= 2");
  Rng rng(seed);
  LogicalGraph g;
  add_nodes(g, n, "r");
  double p = deg / (n - 1);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (rng.uniform() < p) g.add_edge(i, j, rng.uniform(1.0, 2.0));
  mark_multicast(g);
  return g;
}

std::vector<std::string> family_names() {
  return {"mlp", "conv", "tiles", "dag", "planted", "random"};
}

LogicalGraph gen_family(const std::string& family, int n, uint64_t seed) {
  if (family == "mlp") {
    // Four layers in the proportions of 784-512-512-192.
    double s = n / 2000.0;
    std::vector<int> sizes;
    int used = 0;
    for (int base : {784, 512, 512}) {
      sizes.push_back(std::max(1, static_cast<int>(std::lround(base * s))));
      used += sizes.back();
    }
    sizes.push_back(std::max(1, n - used));
    return gen_layered_mlp(sizes, 8, seed);
  }
  if (family == "conv") {
    int side = std::max(2, static_cast<int>(std::lround(std::sqrt(n / 4.0))));
    return gen_conv(side, std::max(1, n / (side * side)), 3, seed);
  }
  if (family == "tiles") {
    // Activation volumes shaped like a small CNN: shrinking spatially, growing in channels.
    std::vector<long long> act = {3, 8, 8, 6, 6, 4, 4, 3, 2, 1};
    long long sum = 0;
    for (long long a : act) sum += a;
    for (long long& a : act) a = std::max(1LL, a * n / sum) * 4096LL;  // whole tiles: sum <= n
    return gen_tiles(act, 4096, 2, seed);
  }
  if (family == "dag") return gen_random_dag(n, std::max(2, n / 16), 2, seed);
  if (family == "planted") {
    int k = std::max(2, n / 16);
    return gen_planted(n, k, std::min(1.0, 6.0 / (n / double(k))), 1.0 / n, seed);
  }
  if (family == "random") return gen_random(n, 4.0, seed);
  throw UsageError(
      "family",
      fmt::format("unknown graph family '{}' (mlp, conv, tiles, dag, planted, random)", family));
}

}  // namespace tessera::mapper
