#include "graph/dlrm_model.h"

#include <cmath>
#include <string>

#include "common/splitmix64.h"
#include "graph/zoo_layers.h"

namespace tessera::graph {

namespace {

uint64_t mix(int t, int64_t row, int64_t col) {
  return SplitMix64(static_cast<uint64_t>(t) * 0x9e3779b97f4a7c15ull ^
                    static_cast<uint64_t>(row) * 0xbf58476d1ce4e5b9ull ^
                    static_cast<uint64_t>(col) * 0x94d049bb133111ebull)
      .next();
}

struct Layer {
  int w = -1, b = -1;
};

// The parameters of an MLP's linear layers `name`<j> on `in` inputs with the given widths;
// appends them and their fan-ins to m.
std::vector<Layer> add_layers(Model& m, int64_t in, const std::vector<int>& widths,
                              const std::string& name) {
  std::vector<Layer> layers;
  for (size_t j = 0; j < widths.size(); ++j) {
    const std::string layer = name + std::to_string(j);
    layers.push_back({m.graph.add_param(layer + ".w", {in, widths[j]}),
                      m.graph.add_param(layer + ".b", {widths[j]})});
    m.params.insert(m.params.end(), {layers.back().w, layers.back().b});
    m.fan_in.insert(m.fan_in.end(), {in, in});
    in = widths[j];
  }
  return layers;
}

// The MLP of `layers` on x; ReLU after every layer but the last unless `last_relu`; the last
// linear layer's output is named `out` (when not empty).
int add_mlp(Graph& g, int x, const std::vector<Layer>& layers, bool last_relu,
            const std::string& name, const std::string& out = "") {
  for (size_t j = 0; j < layers.size(); ++j) {
    const bool last = j + 1 == layers.size();
    x = add_linear(g, x, layers[j].w, layers[j].b, name + std::to_string(j), last ? out : "");
    if (!last || last_relu) x = g.add_node(OpKind::kRelu, {x});
  }
  return x;
}

}  // namespace

float dlrm_table_value(const DlrmSpec& spec, uint64_t seed, int t, int64_t row, int64_t col) {
  SplitMix64 rng(seed ^ mix(t, row, col));
  return static_cast<float>((2 * rng.unit53() - 1) * spec.table_scale);
}

DlrmModel build_dlrm(const DlrmSpec& spec, int batch, double loss_scale) {
  const std::string where = "model 'dlrm'";
  require_at_least(where, batch, 1, "batch");
  require_at_least(where, spec.dense, 1, "dense features");
  require_at_least(where, spec.tables, 1, "tables");
  require_at_least(where, spec.dim, 1, "dim");
  for (int w : spec.bottom) require_at_least(where, w, 1, "a bottom layer's width");
  for (int w : spec.top) require_at_least(where, w, 1, "a top layer's width");
  const int64_t n = batch, D = spec.dim, T = spec.tables;
  DlrmModel d;
  Model& m = d.model;
  m.name = "dlrm";
  m.batch = batch;
  Graph& g = m.graph;
  m.input = g.add_input("x", {n, spec.dense});
  m.labels = g.add_input("labels", {n}, DType::kI32);
  const int64_t pairs = T * (T + 1) / 2;
  std::vector<int> widths = spec.bottom;
  widths.push_back(spec.dim);
  const std::vector<Layer> bottom = add_layers(m, spec.dense, widths, "bottom");
  widths = spec.top;
  widths.push_back(1);
  const std::vector<Layer> top = add_layers(m, D + pairs, widths, "top");
  d.bags = g.add_param("bags", {T, n, D});
  const int z = add_mlp(g, m.input, bottom, true, "bottom");
  // The T + 1 vectors side by side: v [n D, T + 1] (z's and the bags' elements in their order,
  // transposed).
  const int64_t V = T + 1;
  const int v = g.add_node(
      OpKind::kTranspose,
      {g.add_node(
          OpKind::kReshape,
          {g.add_node(OpKind::kConcat,
                      {g.add_node(OpKind::kReshape, {z}, Attrs::reshape({1, n, D})), d.bags},
                      Attrs::concat(0))},
          Attrs::reshape({V, n * D}))});
  // Pair k = (i, j) in lexicographic order: columns i and j of v picked by the one-hot columns k
  // of two constant matrices [T + 1, pairs] (exact in fp32), multiplied element-wise into
  // [n D, pairs] and summed over D.
  std::vector<float> first(static_cast<size_t>(V * pairs), 0.0f), second(first);
  int64_t k = 0;
  for (int64_t i = 0; i < V; ++i)
    for (int64_t j = i + 1; j < V; ++j, ++k) {
      first[static_cast<size_t>(i * pairs + k)] = 1;
      second[static_cast<size_t>(j * pairs + k)] = 1;
    }
  const auto pick = [&](const std::string& name, std::vector<float> columns) {
    return g.add_node(
        OpKind::kMatMul,
        {v, g.add_constant("interaction." + name + "_of_pair", {V, pairs}, std::move(columns))}, {},
        "interaction." + name);
  };
  const int products =
      g.add_node(OpKind::kMul, {pick("first", std::move(first)), pick("second", std::move(second))},
                 {}, "interaction.products");
  const int dots = g.add_node(
      OpKind::kReshape,
      {g.add_node(OpKind::kSumTo,
                  {g.add_node(OpKind::kReshape, {products}, Attrs::reshape({n, D, pairs}))},
                  Attrs::reshape({n, 1, pairs}))},
      Attrs::reshape({n, pairs}), "interaction");
  const int in = g.add_node(OpKind::kConcat, {z, dots}, Attrs::concat(1));
  m.logits = add_mlp(g, in, top, false, "top", "logit");
  const int both = g.add_node(OpKind::kPad, {m.logits}, Attrs::padded({n, 2}, {0, 1}, 0.0));
  const bool scaled = loss_scale != 1;
  m.loss = g.add_node(OpKind::kSoftmaxCrossEntropy, {both, m.labels}, {}, scaled ? "bce" : "loss");
  if (scaled) m.loss = g.add_node(OpKind::kScale, {m.loss}, Attrs::scaled(loss_scale), "loss");
  g.verify();
  return d;
}

std::vector<std::vector<float>> dlrm_init(const DlrmSpec& spec, uint64_t seed) {
  // init_params' bounds, with 53-bit draws.
  const Model m = build_dlrm(spec, 1).model;
  SplitMix64 rng(seed);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < m.params.size(); ++i) {
    const double a = 1.0 / std::sqrt(static_cast<double>(m.fan_in[i]));
    out.emplace_back(static_cast<size_t>(num_elements(m.graph.value(m.params[i]).shape)));
    for (float& x : out.back()) x = static_cast<float>((2 * rng.unit53() - 1) * a);
  }
  return out;
}

}  // namespace tessera::graph
