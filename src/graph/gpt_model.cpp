#include "graph/gpt_model.h"

#include <cmath>
#include <string>

#include "common/normal_draw.h"
#include "common/splitmix64.h"
#include "graph/zoo_layers.h"

namespace tessera::graph {

namespace {

class GptBuilder {
 public:
  GptBuilder(const GptSpec& spec, int batch)
      : m_b(batch), m_t(spec.context), m_d(spec.d_model), m_h(spec.heads) {
    m_model.name = "gpt";
    m_model.batch = batch;
    m_model.input = g().add_input("x", {m_b, m_t}, DType::kI32);
    m_model.labels = g().add_input("labels", {m_b * m_t}, DType::kI32);
  }

  Model build(int layers) {
    const int tok = g().add_param("tok", {kGptVocabulary, m_d});
    const int pos = g().add_param("pos", {m_t, m_d});
    int x = g().add_node(
        OpKind::kAdd, {g().add_node(OpKind::kEmbedding, {tok, m_model.input}, {}, "tok.rows"), pos},
        {}, "embed");
    for (int l = 0; l < layers; ++l) x = block(x, "block" + std::to_string(l) + ".");
    m_model.logits = linear(rows(layer_norm(x, "ln_f")), kGptVocabulary, "head", "logits");
    m_model.loss =
        g().add_node(OpKind::kSoftmaxCrossEntropy, {m_model.logits, m_model.labels}, {}, "loss");
    m_model.params = g().params();
    g().verify();
    return std::move(m_model);
  }

 private:
  Graph& g() { return m_model.graph; }
  int64_t features(int v) { return g().value(v).shape.back(); }

  int layer_norm(int x, const std::string& name) {
    const int gain = g().add_param(name + ".gain", {m_d});
    const int bias = g().add_param(name + ".bias", {m_d});
    return g().add_node(OpKind::kLayerNorm, {x, gain, bias}, Attrs::layer_norm(kGptLayerNormEps),
                        name);
  }

  // [B, T, n] -> [B*T, n] and back.
  int rows(int x) {
    return g().add_node(OpKind::kReshape, {x}, Attrs::reshape({m_b * m_t, features(x)}));
  }
  int sequences(int x) {
    return g().add_node(OpKind::kReshape, {x}, Attrs::reshape({m_b, m_t, features(x)}));
  }

  int linear(int x, int64_t out, const std::string& name, const std::string& value = "") {
    const int w = g().add_param(name + ".w", {features(x), out});
    const int b = g().add_param(name + ".b", {out});
    return add_linear(g(), x, w, b, name, value);
  }

  int attention(int x, const std::string& p) {
    const int64_t dh = m_d / m_h;
    const int qkv = g().add_node(OpKind::kReshape, {linear(rows(x), 3 * m_d, p + "qkv")},
                                 Attrs::reshape({m_b, m_t, 3, m_h, dh}));
    const int heads =
        g().add_node(OpKind::kPermute, {qkv}, Attrs::permute({2, 0, 3, 1, 4}), p + "heads");
    const int q = g().add_node(OpKind::kSelect, {heads}, Attrs::select(0), p + "q");
    const int k = g().add_node(OpKind::kSelect, {heads}, Attrs::select(1), p + "k");
    const int v = g().add_node(OpKind::kSelect, {heads}, Attrs::select(2), p + "v");
    const int scores =
        g().add_node(OpKind::kScale,
                     {g().add_node(OpKind::kBatchMatMul, {q, k}, Attrs::batch_matmul(false, true))},
                     Attrs::scaled(1.0 / std::sqrt(static_cast<double>(dh))), p + "scores");
    const int probs = g().add_node(OpKind::kSoftmax, {scores}, Attrs::softmax(true), p + "probs");
    const int mixed = g().add_node(OpKind::kBatchMatMul, {probs, v}, {}, p + "mixed");
    const int merged = g().add_node(
        OpKind::kReshape, {g().add_node(OpKind::kPermute, {mixed}, Attrs::permute({0, 2, 1, 3}))},
        Attrs::reshape({m_b * m_t, m_d}), p + "merged");
    return sequences(linear(merged, m_d, p + "proj"));
  }

  int block(int x, const std::string& p) {
    x = g().add_node(OpKind::kAdd, {x, attention(layer_norm(x, p + "ln1"), p + "attn.")}, {},
                     p + "x1");
    const int hidden =
        g().add_node(OpKind::kGelu, {linear(rows(layer_norm(x, p + "ln2")), 4 * m_d, p + "mlp.fc")},
                     {}, p + "mlp.gelu");
    return g().add_node(OpKind::kAdd, {x, sequences(linear(hidden, m_d, p + "mlp.proj"))}, {},
                        p + "x2");
  }

  int64_t m_b, m_t, m_d, m_h;
  Model m_model;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

Model build_gpt(const GptSpec& spec, int batch) {
  const std::string where = "model 'gpt'";
  require_at_least(where, batch, 1, "batch");
  require_at_least(where, spec.d_model, 1, "d_model");
  require_at_least(where, spec.heads, 1, "heads");
  require_at_least(where, spec.layers, 1, "layers");
  require_at_least(where, spec.context, 1, "context");
  require_heads_divide(where, spec.heads, spec.d_model);
  return GptBuilder(spec, batch).build(spec.layers);
}

std::vector<std::vector<float>> init_gpt_params(const Model& m, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::vector<float>> out;
  for (int p : m.params) {
    const Value& v = m.graph.value(p);
    const bool normal = ends_with(v.name, ".w") || v.name == "tok" || v.name == "pos";
    const float constant = ends_with(v.name, ".gain") ? 1.0f : 0.0f;
    std::vector<float> x(static_cast<size_t>(num_elements(v.shape)), constant);
    if (normal)
      for (float& e : x) e = static_cast<float>(0.02 * standard_normal(rng));
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace tessera::graph
