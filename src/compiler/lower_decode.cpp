#include "compiler/lower_decode.h"

#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels_sample.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

namespace {

using graph::Attrs;
using graph::OpKind;

constexpr int64_t kAlignWords = 1024;

int64_t aligned(int64_t words) {
  return ceil_div(words, kAlignWords) * kAlignWords;
}

// The step graph of feed_program with the HBM word of every value: views of the layout for the
// parameters, ids and cache rows; the select copies into the cache at their rows; the logits at
// the layout's; every other node output in the work area (a reshape's at its input's words).
class StepGraph {
 public:
  StepGraph(const DecodeLayout& layout, int p0, int m)
      : m_layout(layout), m_p0(p0), m_m(m), m_work(layout.work) {}

  void build() {
    const graph::GptSpec& s = m_layout.spec;
    const int64_t d = s.d_model;
    const graph::Model model = graph::build_gpt(s, 1);
    for (size_t i = 0; i < model.params.size(); ++i) {
      const graph::Value& v = model.graph.value(model.params[i]);
      m_params[v.name] = view(v.name, v.shape, m_layout.params[i]);
    }
    const int ids = view("ids", {m_m}, m_layout.ids, graph::DType::kI32);
    const int pos = view("pos.rows", {m_m, d}, m_layout.params[1] + m_p0 * d);
    int x = node(OpKind::kAdd, {node(OpKind::kEmbedding, {m_params.at("tok"), ids}), pos});
    for (int l = 0; l < s.layers; ++l) x = block(x, l);
    const int last = view("x.last", {1, d}, m_hbm.at(x) + (m_m - 1) * d);
    const int normed = node(OpKind::kLayerNorm, {last, param("ln_f.gain"), param("ln_f.bias")},
                            Attrs::layer_norm(graph::kGptLayerNormEps));
    linear(normed, "head", m_layout.logits);
  }

  const graph::Graph& graph() const { return m_g; }
  const std::map<int, int64_t>& hbm() const { return m_hbm; }
  int64_t work_end() const { return m_work; }

 private:
  int param(const std::string& name) const { return m_params.at(name); }

  int view(const std::string& name, graph::Shape shape, int64_t hbm,
           graph::DType dtype = graph::DType::kF32) {
    const int v = m_g.add_input(name, std::move(shape), dtype);
    m_hbm[v] = hbm;
    return v;
  }

  // A node whose output goes to `hbm`, or (-1) to the next words of the work area.
  int node(OpKind op, std::vector<int> inputs, Attrs attrs = {}, int64_t hbm = -1) {
    const int v = m_g.add_node(op, std::move(inputs), std::move(attrs), fmt::format("%{}", m_n++));
    if (op == OpKind::kReshape) {
      m_hbm[v] = m_hbm.at(m_g.node(m_g.value(v).producer).inputs.at(0));
    } else if (hbm >= 0) {
      m_hbm[v] = hbm;
    } else {
      m_hbm[v] = m_work;
      m_work += aligned(graph::num_elements(m_g.value(v).shape));
    }
    return v;
  }

  int linear(int x, const std::string& name, int64_t hbm = -1) {
    return node(OpKind::kAdd, {node(OpKind::kMatMul, {x, param(name + ".w")}), param(name + ".b")},
                {}, hbm);
  }

  int layer_norm(int x, const std::string& name) {
    return node(OpKind::kLayerNorm, {x, param(name + ".gain"), param(name + ".bias")},
                Attrs::layer_norm(graph::kGptLayerNormEps));
  }

  int block(int x, int l) {
    const graph::GptSpec& s = m_layout.spec;
    const int64_t H = s.heads, dh = s.d_model / s.heads, m = m_m, T = m_p0 + m_m;
    const std::string p = fmt::format("block{}.", l);
    const int qkv = linear(layer_norm(x, p + "ln1"), p + "attn.qkv");
    // [m, 3, H, dh] -> [3, H, m, dh] seen as [3H, m, dh]: queries, keys, values of each head.
    const int heads =
        node(OpKind::kReshape,
             {node(OpKind::kPermute, {node(OpKind::kReshape, {qkv}, Attrs::reshape({m, 3, H, dh}))},
                   Attrs::permute({1, 2, 0, 3}))},
             Attrs::reshape({3 * H, m, dh}));
    const int64_t mixed_hbm = m_work;
    m_work += aligned(H * m * dh);
    const int mixed = view(p + "mixed", {H, m, dh}, mixed_hbm);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t region = ((l * H + h) * s.context) * dh;
      node(OpKind::kSelect, {heads}, Attrs::select(static_cast<int>(H + h)),
           m_layout.keys + region + m_p0 * dh);
      node(OpKind::kSelect, {heads}, Attrs::select(static_cast<int>(2 * H + h)),
           m_layout.values + region + m_p0 * dh);
      const int q = view(fmt::format("{}q{}", p, h), {m, dh}, m_hbm.at(heads) + h * m * dh);
      const int keys = view(fmt::format("{}keys{}", p, h), {T, dh}, m_layout.keys + region);
      const int values = view(fmt::format("{}values{}", p, h), {T, dh}, m_layout.values + region);
      const int scores = node(
          OpKind::kScale, {node(OpKind::kBatchMatMul, {q, keys}, Attrs::batch_matmul(false, true))},
          Attrs::scaled(1.0 / std::sqrt(static_cast<double>(dh))));
      const int probs = node(OpKind::kSoftmax, {scores}, Attrs::softmax(true));
      node(OpKind::kBatchMatMul, {probs, values}, {}, mixed_hbm + h * m * dh);
    }
    const int merged =
        node(OpKind::kReshape, {node(OpKind::kPermute, {mixed}, Attrs::permute({1, 0, 2}))},
             Attrs::reshape({m, s.d_model}));
    x = node(OpKind::kAdd, {x, linear(merged, p + "attn.proj")});
    const int hidden = node(OpKind::kGelu, {linear(layer_norm(x, p + "ln2"), p + "mlp.fc")});
    return node(OpKind::kAdd, {x, linear(hidden, p + "mlp.proj")});
  }

  const DecodeLayout& m_layout;
  int m_p0, m_m;
  int64_t m_work;
  int m_n = 0;
  graph::Graph m_g;
  std::map<int, int64_t> m_hbm;
  std::map<std::string, int> m_params;
};

}  // namespace

DecodeLayout decode_layout(const graph::GptSpec& spec) {
  DecodeLayout l;
  l.spec = spec;
  const graph::Model model = graph::build_gpt(spec, 1);
  int64_t at = 0;
  for (int p : model.params) {
    l.params.push_back(at);
    at += aligned(graph::num_elements(model.graph.value(p).shape));
  }
  l.cache_words = int64_t{spec.layers} * spec.context * spec.d_model;
  l.keys = at;
  l.values = l.keys + aligned(l.cache_words);
  l.ids = l.values + aligned(l.cache_words);
  l.logits = l.ids + aligned(spec.context);
  l.token = l.logits + aligned(graph::kGptVocabulary);
  l.work = l.token + kAlignWords;
  return l;
}

FeedProgram feed_program(const DecodeLayout& layout, int p0, int m, const numerics::Sampling& s,
                         const core::CoreSpec& spec) {
  const std::string where = "generate";
  if (m < 1 || p0 < 0 || p0 + m > layout.spec.context)
    throw Error(where, "positions " + std::to_string(p0) + " .. " + std::to_string(p0 + m - 1) +
                           " are outside the context of " + std::to_string(layout.spec.context));
  StepGraph step(layout, p0, m);
  step.build();
  const int64_t limit = spec.hbm_bytes / 4;
  if (step.work_end() > limit)
    throw Error(where, "the model and its KV cache need " + std::to_string(step.work_end() * 4) +
                           " bytes of HBM; the core has " + std::to_string(limit * 4));
  Pipeline p;
  p.spec = &spec;
  p.options.training = false;
  p.graph = step.graph();
  p.hbm = step.hbm();
  p.out.stats.hbm_words = step.work_end();  // the kernels' scratch starts here
  Codegen cg(spec);
  for (const graph::Node& n : p.graph.nodes()) lower_node(p, cg, n);
  emit_sample(cg, "sample", layout.logits, layout.token, graph::kGptVocabulary, s);
  FeedProgram f;
  f.program = cg.finish();
  f.hbm_words = step.work_end() + p.scratch_words;
  return f;
}

}  // namespace tessera::compiler
