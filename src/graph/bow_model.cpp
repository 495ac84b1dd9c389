#include "graph/bow_model.h"

#include <string>

#include "common/error.h"
#include "common/normal_draw.h"
#include "common/splitmix64.h"

namespace tessera::graph {

Model build_bow(const BowSpec& spec, int batch, int64_t capacity) {
  if (batch < 1 || capacity < 1 || spec.rows < 1 || spec.dim < 1 || spec.classes < 1)
    throw Error("model 'bow'", "batch, id capacity, rows, dim and classes must be >= 1");
  Model m;
  m.name = "bow";
  m.batch = batch;
  Graph& g = m.graph;
  m.input = g.add_input("ids", {capacity}, DType::kI32);
  const int offsets = g.add_input("offsets", {int64_t{batch} + 1}, DType::kI32);
  m.labels = g.add_input("labels", {batch}, DType::kI32);
  const int w = g.add_param("fc.w", {spec.dim, spec.classes});
  const int b = g.add_param("fc.b", {spec.classes});
  const int table = g.add_param("table", {spec.rows, spec.dim});
  const int h = g.add_node(OpKind::kEmbeddingBag, {m.input, offsets, table},
                           Attrs::embedding_bag(numerics::Combiner::Mean), "bag");
  m.logits = g.add_node(OpKind::kAdd, {g.add_node(OpKind::kMatMul, {h, w}), b}, {}, "logits");
  m.loss = g.add_node(OpKind::kSoftmaxCrossEntropy, {m.logits, m.labels}, {}, "loss");
  m.params = g.params();
  m.fan_in = {spec.dim, spec.dim, 1};
  return m;
}

int bow_offsets(const Model& m) {
  return m.graph.find_value("offsets");
}

std::vector<float> bow_table_row(const BowSpec& spec, uint64_t seed, int64_t row) {
  // The row's stream starts at a mixed state: streams started at states that differ by a multiple
  // of SplitMix64's increment would be shifted copies of one another.
  SplitMix64 rng(
      SplitMix64(seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(row + 1))).next());
  std::vector<float> x(static_cast<size_t>(spec.dim));
  for (float& e : x) e = static_cast<float>(spec.table_std * standard_normal(rng));
  return x;
}

}  // namespace tessera::graph
