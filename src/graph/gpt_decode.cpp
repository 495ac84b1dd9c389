#include "graph/gpt_decode.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "common/error.h"
#include "graph/transformer_kernels.h"

namespace tessera::graph {

namespace {

const char* const kWhere = "model 'gpt'";

}  // namespace

GptDecoder::GptDecoder(const GptSpec& spec, std::vector<std::vector<float>> params, Numerics mode)
    : m_spec(spec), m_mode(mode), m_matmul{mode, true}, m_params(std::move(params)) {
  TESSERA_CHECK(mode != Numerics::kF64, "GptDecoder runs kChip or kF32");
  const Model m = build_gpt(spec, 1);
  if (m_params.size() != m.params.size())
    throw Error(kWhere, "expected " + std::to_string(m.params.size()) + " parameter tensors, got " +
                            std::to_string(m_params.size()));
  for (size_t i = 0; i < m.params.size(); ++i) {
    const Value& v = m.graph.value(m.params[i]);
    if (static_cast<int64_t>(m_params[i].size()) != num_elements(v.shape))
      throw Error(kWhere, "parameter '" + v.name + "' has " + std::to_string(m_params[i].size()) +
                              " values, its shape " + shape_str(v.shape) + " needs " +
                              std::to_string(num_elements(v.shape)));
    m_names.push_back(v.name);
  }
  const size_t cache = static_cast<size_t>(spec.context) * spec.d_model;
  m_keys.assign(spec.layers, std::vector<float>(cache));
  m_values.assign(spec.layers, std::vector<float>(cache));
}

int64_t GptDecoder::cache_bytes(const GptSpec& spec, int64_t n) {
  return 2 * int64_t{spec.layers} * n * spec.d_model * 4;
}

const std::vector<float>& GptDecoder::param(const std::string& name) const {
  for (size_t i = 0; i < m_names.size(); ++i)
    if (m_names[i] == name) return m_params[i];
  throw Error(kWhere, "no parameter '" + name + "'");
}

std::vector<float> GptDecoder::linear(const std::vector<float>& x, int rows,
                                      const std::string& name) const {
  const std::vector<float>& w = param(name + ".w");
  const std::vector<float>& b = param(name + ".b");
  const int n_in = static_cast<int>(x.size()) / rows, n_out = static_cast<int>(b.size());
  std::vector<float> prod(static_cast<size_t>(rows) * n_out), y(prod.size());
  m_matmul(x.data(), w.data(), prod.data(), rows, n_in, n_out);
  kernels::add_broadcast(prod.data(), b.data(), y.data(), static_cast<long>(y.size()), n_out);
  return y;
}

std::vector<float> GptDecoder::layer_norm(const std::vector<float>& x,
                                          const std::string& name) const {
  const long d = m_spec.d_model;
  std::vector<float> y(x.size());
  kernels::layer_norm(x.data(), param(name + ".gain").data(), param(name + ".bias").data(),
                      y.data(), static_cast<long>(x.size()) / d, static_cast<int>(d),
                      kGptLayerNormEps, m_mode);
  return y;
}

std::vector<float> GptDecoder::feed(const std::vector<int32_t>& tokens) {
  const int m = static_cast<int>(tokens.size());
  const int p0 = m_cached, T = p0 + m;
  const int d = m_spec.d_model, H = m_spec.heads, dh = d / H, ctx = m_spec.context;
  if (m == 0) throw Error(kWhere, "no tokens to feed");
  if (T > ctx)
    throw Error(kWhere,
                std::to_string(T) + " positions pass the context of " + std::to_string(ctx));
  auto add = [](std::vector<float>& x, const std::vector<float>& y) {
    kernels::add_broadcast(x.data(), y.data(), x.data(), static_cast<long>(x.size()),
                           static_cast<long>(y.size()));
  };

  const size_t md = static_cast<size_t>(m) * d;
  std::vector<float> x(md);
  kernels::embedding(param("tok").data(), tokens.data(), x.data(), m, kGptVocabulary, d);
  const std::vector<float>& pos = param("pos");
  add(x, std::vector<float>(pos.begin() + static_cast<long>(p0) * d,
                            pos.begin() + static_cast<long>(T) * d));

  for (int l = 0; l < m_spec.layers; ++l) {
    const std::string block = "block" + std::to_string(l) + ".";
    const std::vector<float> qkv = linear(layer_norm(x, block + "ln1"), m, block + "attn.qkv");
    std::vector<float> heads(qkv.size());  // [3, H, m, dh]: queries, keys, values
    kernels::permute(qkv.data(), heads.data(), {m, 3, H, dh}, {1, 2, 0, 3});
    std::vector<float> mixed(md);  // [H, m, dh]
    std::vector<float> scores(static_cast<size_t>(m) * T), probs(scores.size());
    for (int h = 0; h < H; ++h) {
      const size_t rows_h = static_cast<size_t>(h) * m * dh, rows = static_cast<size_t>(m) * dh;
      float* keys = m_keys[l].data() + static_cast<size_t>(h) * ctx * dh;
      float* values = m_values[l].data() + static_cast<size_t>(h) * ctx * dh;
      std::copy_n(heads.data() + md + rows_h, rows, keys + static_cast<size_t>(p0) * dh);
      std::copy_n(heads.data() + 2 * md + rows_h, rows, values + static_cast<size_t>(p0) * dh);
      kernels::batch_matmul(heads.data() + rows_h, keys, scores.data(), 1, m, dh, T, false, true,
                            m_matmul);
      kernels::scale(scores.data(), scores.data(), static_cast<long>(scores.size()),
                     1.0 / std::sqrt(static_cast<double>(dh)));
      kernels::softmax(scores.data(), probs.data(), 1, m, T, true, m_mode);
      kernels::batch_matmul(probs.data(), values, mixed.data() + rows_h, 1, m, T, dh, false, false,
                            m_matmul);
    }
    std::vector<float> merged(md);
    kernels::permute(mixed.data(), merged.data(), {H, m, dh}, {1, 0, 2});
    add(x, linear(merged, m, block + "attn.proj"));
    std::vector<float> hidden = linear(layer_norm(x, block + "ln2"), m, block + "mlp.fc");
    kernels::gelu(hidden.data(), hidden.data(), static_cast<long>(hidden.size()), m_mode);
    add(x, linear(hidden, m, block + "mlp.proj"));
  }
  m_cached = T;
  return linear(layer_norm(std::vector<float>(x.end() - d, x.end()), "ln_f"), 1, "head");
}

}  // namespace tessera::graph
