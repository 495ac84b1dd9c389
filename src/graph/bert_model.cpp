#include "graph/bert_model.h"

#include <cmath>
#include <string>

#include "graph/zoo_layers.h"

namespace tessera::graph {

namespace {

class BertBuilder {
 public:
  BertBuilder(const BertSpec& spec, int batch)
      : m_spec(spec), m_b(batch), m_s(spec.seq), m_d(spec.d_model), m_h(spec.heads) {
    m_model.name = "bert";
    m_model.batch = batch;
    m_model.input = g().add_input("x", {m_b, m_s}, DType::kI32);
    m_model.labels = g().add_input("labels", {m_b * m_s}, DType::kI32);
  }

  Model build() {
    const int tok = g().add_param("tok", {m_spec.vocab, m_d});
    const int pos = g().add_param("pos", {m_s, m_d});
    const int embedded = g().add_node(
        OpKind::kAdd, {g().add_node(OpKind::kEmbedding, {tok, m_model.input}, {}, "tok.rows"), pos},
        {}, "embed");
    int x =
        g().add_node(OpKind::kReshape, {embedded}, Attrs::reshape({m_b * m_s, m_d}), "embed.rows");
    for (int l = 0; l < m_spec.layers; ++l) x = layer(x, "layer" + std::to_string(l) + ".");
    m_model.logits = linear(x, m_spec.vocab, "head", "logits");
    finish_with_loss(m_model);
    return std::move(m_model);
  }

 private:
  Graph& g() { return m_model.graph; }

  int linear(int x, int64_t out, const std::string& name, const std::string& value = "") {
    const int w = g().add_param(name + ".w", {g().value(x).shape.back(), out});
    const int b = g().add_param(name + ".b", {out});
    return add_linear(g(), x, w, b, name, value);
  }

  // LayerNorm(x + residual).
  int add_norm(int x, int residual, const std::string& name) {
    const int sum = g().add_node(OpKind::kAdd, {x, residual}, {}, name + ".residual");
    const int gain = g().add_param(name + ".gain", {m_d});
    const int bias = g().add_param(name + ".bias", {m_d});
    return g().add_node(OpKind::kLayerNorm, {sum, gain, bias}, Attrs::layer_norm(kBertLayerNormEps),
                        name);
  }

  // Rows [B*S, d] -> heads [B, H, S, dh].
  int heads(int rows, const std::string& name) {
    const int split = g().add_node(OpKind::kReshape, {rows},
                                   Attrs::reshape({m_b, m_s, m_h, m_d / m_h}), name + ".split");
    return g().add_node(OpKind::kPermute, {split}, Attrs::permute({0, 2, 1, 3}), name + ".heads");
  }

  int layer(int x, const std::string& p) {
    const int q = heads(linear(x, m_d, p + "attn.q"), p + "attn.q");
    const int k = heads(linear(x, m_d, p + "attn.k"), p + "attn.k");
    const int v = heads(linear(x, m_d, p + "attn.v"), p + "attn.v");
    const int scores = g().add_node(OpKind::kScale,
                                    {g().add_node(OpKind::kBatchMatMul, {q, k},
                                                  Attrs::batch_matmul(false, true), p + "attn.qk")},
                                    Attrs::scaled(1.0 / std::sqrt(static_cast<double>(m_d / m_h))),
                                    p + "attn.scores");
    const int probs =
        g().add_node(OpKind::kSoftmax, {scores}, Attrs::softmax(false), p + "attn.probs");
    const int mixed = g().add_node(OpKind::kBatchMatMul, {probs, v}, {}, p + "attn.mixed");
    const int merged = g().add_node(
        OpKind::kReshape,
        {g().add_node(OpKind::kPermute, {mixed}, Attrs::permute({0, 2, 1, 3}), p + "attn.merge")},
        Attrs::reshape({m_b * m_s, m_d}), p + "attn.a");
    const int r = add_norm(linear(merged, m_d, p + "attn.o"), x, p + "ln1");
    const int f = g().add_node(OpKind::kRelu, {linear(r, 4 * m_d, p + "ff1")}, {}, p + "ff1.relu");
    return add_norm(linear(f, m_d, p + "ff2"), r, p + "ln2");
  }

  BertSpec m_spec;
  int64_t m_b, m_s, m_d, m_h;
  Model m_model;
};

}  // namespace

Model build_bert(const BertSpec& spec, int batch) {
  const std::string where = "model 'bert'";
  require_at_least(where, batch, 1, "batch");
  require_at_least(where, spec.layers, 1, "layers");
  require_at_least(where, spec.d_model, 1, "d_model");
  require_at_least(where, spec.heads, 1, "heads");
  require_at_least(where, spec.seq, 1, "seq");
  require_at_least(where, spec.vocab, 1, "vocab");
  require_heads_divide(where, spec.heads, spec.d_model);
  return BertBuilder(spec, batch).build();
}

}  // namespace tessera::graph
