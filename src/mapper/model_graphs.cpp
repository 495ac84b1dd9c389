// gen_from_model: the zoo models (mlp, cnn) as logical graphs of neuron groups / tiles.
//
// mlp 784-256-128-10: each layer is cut into groups of `group` neurons (one node each); every group
// sends its outputs to every group of the next layer, weight = activations sent (= source group
// size). cnn: a node is an input tile, a conv tile (spatial block of pooled output pixels x a group
// of 8 output channels, relu and maxpool fused), or the fc layer; a conv tile receives from every
// tile of the previous layer whose pixels its 5x5 pad-2 receptive field touches, weight = the
// overlapping activation count (pixels x channels).
#include <algorithm>

#include "common/error.h"
#include "mapper/generators.h"

namespace tessera::mapper {
namespace {

struct Rect {
  int y0, y1, x0, x1;  // half-open
};

int overlap(const Rect& a, const Rect& b) {
  int h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  int w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  return h > 0 && w > 0 ? h * w : 0;
}

// Tiles of a side x side map in blocks of t x t: rectangles in that map's coordinates.
std::vector<Rect> tile_map(int side, int t) {
  std::vector<Rect> r;
  for (int y = 0; y < side; y += t)
    for (int x = 0; x < side; x += t)
      r.push_back({y, std::min(side, y + t), x, std::min(side, x + t)});
  return r;
}

// A conv tile covering pooled rectangle `p` reads this input rectangle (pre-pool x2, kernel 5 pad
// 2).
Rect receptive(const Rect& p) {
  return {2 * p.y0 - 2, 2 * p.y1 + 2, 2 * p.x0 - 2, 2 * p.x1 + 2};
}

LogicalGraph mlp_graph(int group) {
  const std::vector<int> sizes = {784, 256, 128, 10};
  LogicalGraph g;
  std::vector<std::vector<int>> ids(sizes.size());
  std::vector<std::vector<int>> counts(sizes.size());
  for (size_t l = 0; l < sizes.size(); ++l)
    for (int s = 0; s < sizes[l]; s += group) {
      ids[l].push_back(g.add_node({fmt::format("fc{}_{}", l, s / group), l + 1 < sizes.size()}));
      counts[l].push_back(std::min(group, sizes[l] - s));
    }
  for (size_t l = 0; l + 1 < sizes.size(); ++l)
    for (size_t a = 0; a < ids[l].size(); ++a)
      for (int b : ids[l + 1]) g.add_edge(ids[l][a], b, counts[l][a]);
  return g;
}

LogicalGraph cnn_graph(int t) {
  LogicalGraph g;
  const int t2 = std::max(1, t / 2);
  // Input tiles (in 28x28 input pixels) aligned with conv1's pre-pool tiles.
  std::vector<Rect> in_tiles = tile_map(28, 2 * t);
  std::vector<int> in_ids;
  for (size_t i = 0; i < in_tiles.size(); ++i)
    in_ids.push_back(g.add_node({fmt::format("in_{}", i), true}));
  std::vector<Rect> c1 = tile_map(14, t), c2 = tile_map(7, t2);
  std::vector<int> c1_ids, c2_ids;
  for (size_t i = 0; i < c1.size(); ++i)
    for (int cg = 0; cg < 4; ++cg) {
      int id = g.add_node({fmt::format("conv1_{}_{}", i, cg), true});
      c1_ids.push_back(id);
      for (size_t k = 0; k < in_tiles.size(); ++k)
        if (int ov = overlap(receptive(c1[i]), in_tiles[k])) g.add_edge(in_ids[k], id, ov);
    }
  for (size_t i = 0; i < c2.size(); ++i)
    for (int cg = 0; cg < 8; ++cg) {
      int id = g.add_node({fmt::format("conv2_{}_{}", i, cg), false});
      c2_ids.push_back(id);
      for (size_t k = 0; k < c1.size(); ++k)
        if (int ov = overlap(receptive(c2[i]), c1[k]))
          for (int cg1 = 0; cg1 < 4; ++cg1) g.add_edge(c1_ids[k * 4 + cg1], id, ov * 8);
    }
  int fc = g.add_node({"fc", false});
  for (size_t i = 0; i < c2.size(); ++i) {
    int area = (c2[i].y1 - c2[i].y0) * (c2[i].x1 - c2[i].x0);
    for (int cg = 0; cg < 8; ++cg) g.add_edge(c2_ids[i * 8 + cg], fc, area * 8);
  }
  return g;
}

}  // namespace

LogicalGraph gen_from_model(const std::string& model, int group) {
  if (model == "mlp") {
    if (group < 1) throw UsageError("--group", "must be >= 1");
    return mlp_graph(group);
  }
  if (model == "cnn") {
    if (group < 1 || group > 14) throw UsageError("--group", "cnn tile side must be in [1, 14]");
    return cnn_graph(group);
  }
  throw UsageError("--from-model", fmt::format("unknown model '{}' (mlp, cnn)", model));
}

}  // namespace tessera::mapper
