#include "graph/dlrm_model.h"

#include <cmath>

#include "common/splitmix64.h"

namespace tessera::graph {

namespace {

size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

uint64_t mix(int t, int64_t row, int64_t col) {
  return SplitMix64(static_cast<uint64_t>(t) * 0x9e3779b97f4a7c15ull ^
                    static_cast<uint64_t>(row) * 0xbf58476d1ce4e5b9ull ^
                    static_cast<uint64_t>(col) * 0x94d049bb133111ebull)
      .next();
}

std::vector<DlrmLayer> mlp(int in, const std::vector<int>& hidden, int out, SplitMix64& rng) {
  std::vector<DlrmLayer> layers;
  std::vector<int> widths = hidden;
  widths.push_back(out);
  for (int w : widths) {
    DlrmLayer l{in, w, std::vector<float>(at(int64_t{in} * w)), std::vector<float>(at(w))};
    const double a = 1.0 / std::sqrt(static_cast<double>(in));
    for (float& v : l.w) v = static_cast<float>((2 * rng.unit53() - 1) * a);
    for (float& v : l.b) v = static_cast<float>((2 * rng.unit53() - 1) * a);
    layers.push_back(std::move(l));
    in = w;
  }
  return layers;
}

// y[n, out] = x[n, in] W + b, then ReLU when `relu`.
void layer_forward(const DlrmLayer& l, const std::vector<float>& x, int n, bool relu,
                   std::vector<float>& y) {
  y.assign(at(int64_t{n} * l.out), 0.0f);
  for (int i = 0; i < n; ++i) {
    float* yi = y.data() + int64_t{i} * l.out;
    for (int o = 0; o < l.out; ++o) yi[o] = l.b[at(o)];
    for (int k = 0; k < l.in; ++k) {
      const float xk = x[at(int64_t{i} * l.in + k)];
      const float* wk = l.w.data() + int64_t{k} * l.out;
      for (int o = 0; o < l.out; ++o) yi[o] += xk * wk[o];
    }
    if (relu)
      for (int o = 0; o < l.out; ++o) yi[o] = std::max(yi[o], 0.0f);
  }
}

// Given dy (after the ReLU's mask is applied), adds dW, db and returns dx.
std::vector<float> layer_backward(const DlrmLayer& l, const std::vector<float>& x,
                                  const std::vector<float>& dy, int n, DlrmLayer& g) {
  std::vector<float> dx(at(int64_t{n} * l.in), 0.0f);
  for (int i = 0; i < n; ++i) {
    const float* dyi = dy.data() + int64_t{i} * l.out;
    for (int o = 0; o < l.out; ++o) g.b[at(o)] += dyi[o];
    for (int k = 0; k < l.in; ++k) {
      const float xk = x[at(int64_t{i} * l.in + k)];
      const float* wk = l.w.data() + int64_t{k} * l.out;
      float* gk = g.w.data() + int64_t{k} * l.out;
      float s = 0;
      for (int o = 0; o < l.out; ++o) {
        gk[o] += xk * dyi[o];
        s += wk[o] * dyi[o];
      }
      dx[at(int64_t{i} * l.in + k)] = s;
    }
  }
  return dx;
}

// Backward through an MLP whose activations are act (act[0] its input, act[j + 1] layer j's
// output); dy is the gradient of the last output. Hidden layers are ReLU; the last is ReLU when
// `last_relu`. Returns the gradient of the input.
std::vector<float> mlp_backward(const std::vector<DlrmLayer>& layers,
                                const std::vector<std::vector<float>>& act, std::vector<float> dy,
                                int n, bool last_relu, std::vector<DlrmLayer>& grads) {
  for (size_t j = layers.size(); j-- > 0;) {
    const bool relu = j + 1 < layers.size() || last_relu;
    if (relu)
      for (size_t e = 0; e < dy.size(); ++e)
        if (!(act[j + 1][e] > 0.0f)) dy[e] = 0.0f;
    dy = layer_backward(layers[j], act[j], dy, n, grads[j]);
  }
  return dy;
}

}  // namespace

float dlrm_table_value(const DlrmSpec& spec, uint64_t seed, int t, int64_t row, int64_t col) {
  SplitMix64 rng(seed ^ mix(t, row, col));
  return static_cast<float>((2 * rng.unit53() - 1) * spec.table_scale);
}

int64_t DlrmDense::size() const {
  int64_t n = 0;
  for (int64_t s : sizes()) n += s;
  return n;
}

std::vector<float*> DlrmDense::tensors() {
  std::vector<float*> v;
  for (auto* mlp : {&bottom, &top})
    for (DlrmLayer& l : *mlp) {
      v.push_back(l.w.data());
      v.push_back(l.b.data());
    }
  return v;
}

std::vector<int64_t> DlrmDense::sizes() const {
  std::vector<int64_t> v;
  for (const auto* mlp : {&bottom, &top})
    for (const DlrmLayer& l : *mlp) {
      v.push_back(static_cast<int64_t>(l.w.size()));
      v.push_back(static_cast<int64_t>(l.b.size()));
    }
  return v;
}

DlrmDense dlrm_init(const DlrmSpec& spec, uint64_t seed) {
  SplitMix64 rng(seed);
  DlrmDense d;
  d.bottom = mlp(spec.dense, spec.bottom, spec.dim, rng);
  const int pairs = spec.tables * (spec.tables + 1) / 2;
  d.top = mlp(spec.dim + pairs, spec.top, 1, rng);
  return d;
}

DlrmDense dlrm_zeros_like(const DlrmDense& d) {
  DlrmDense z = d;
  for (auto* mlp : {&z.bottom, &z.top})
    for (DlrmLayer& l : *mlp) {
      std::fill(l.w.begin(), l.w.end(), 0.0f);
      std::fill(l.b.begin(), l.b.end(), 0.0f);
    }
  return z;
}

const std::vector<float>& DlrmStep::forward(const DlrmDense& p, const std::vector<float>& x,
                                            const std::vector<std::vector<float>>& pooled, int n) {
  const int D = m_spec.dim, T = m_spec.tables;
  m_n = n;
  m_pooled = pooled;
  m_bottom_act.assign(p.bottom.size() + 1, {});
  m_bottom_act[0] = x;
  for (size_t j = 0; j < p.bottom.size(); ++j)
    layer_forward(p.bottom[j], m_bottom_act[j], n, true, m_bottom_act[j + 1]);
  const std::vector<float>& z = m_bottom_act.back();
  const int width = p.top.front().in;
  std::vector<float> in(at(int64_t{n} * width));
  for (int i = 0; i < n; ++i) {
    float* row = in.data() + int64_t{i} * width;
    const auto v = [&](int k) {
      return k == 0 ? z.data() + int64_t{i} * D : pooled[at(k - 1)].data() + int64_t{i} * D;
    };
    for (int d = 0; d < D; ++d) row[d] = v(0)[d];
    int f = D;
    for (int a = 0; a <= T; ++a)
      for (int b = a + 1; b <= T; ++b) {
        float s = 0;
        for (int d = 0; d < D; ++d) s += v(a)[d] * v(b)[d];
        row[f++] = s;
      }
  }
  m_top_act.assign(p.top.size() + 1, {});
  m_top_act[0] = std::move(in);
  for (size_t j = 0; j < p.top.size(); ++j)
    layer_forward(p.top[j], m_top_act[j], n, j + 1 < p.top.size(), m_top_act[j + 1]);
  m_logits = m_top_act.back();
  return m_logits;
}

double DlrmStep::loss(const std::vector<float>& labels) const {
  double s = 0;
  for (int i = 0; i < m_n; ++i) {
    const double z = m_logits[at(i)], y = labels[at(i)];
    s += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::abs(z)));
  }
  return m_n > 0 ? s / m_n : 0.0;
}

std::vector<std::vector<float>> DlrmStep::backward(const DlrmDense& p,
                                                   const std::vector<float>& labels, float scale,
                                                   DlrmDense& grads) {
  const int D = m_spec.dim, T = m_spec.tables, n = m_n;
  std::vector<float> dlogit(at(n));
  for (int i = 0; i < n; ++i) {
    const float z = m_logits[at(i)];
    dlogit[at(i)] = (1.0f / (1.0f + std::exp(-z)) - labels[at(i)]) * scale;
  }
  const std::vector<float> din = mlp_backward(p.top, m_top_act, dlogit, n, false, grads.top);
  const std::vector<float>& z = m_bottom_act.back();
  const int width = p.top.front().in;
  std::vector<float> dz(at(int64_t{n} * D), 0.0f);
  std::vector<std::vector<float>> dpooled(at(T), std::vector<float>(at(int64_t{n} * D), 0.0f));
  for (int i = 0; i < n; ++i) {
    const float* drow = din.data() + int64_t{i} * width;
    const auto v = [&](int k) {
      return k == 0 ? z.data() + int64_t{i} * D : m_pooled[at(k - 1)].data() + int64_t{i} * D;
    };
    const auto dv = [&](int k) {
      return k == 0 ? dz.data() + int64_t{i} * D : dpooled[at(k - 1)].data() + int64_t{i} * D;
    };
    for (int d = 0; d < D; ++d) dz[at(int64_t{i} * D + d)] = drow[d];
    int f = D;
    for (int a = 0; a <= T; ++a)
      for (int b = a + 1; b <= T; ++b) {
        const float g = drow[f++];
        for (int d = 0; d < D; ++d) {
          dv(a)[d] += g * v(b)[d];
          dv(b)[d] += g * v(a)[d];
        }
      }
  }
  mlp_backward(p.bottom, m_bottom_act, dz, n, true, grads.bottom);
  return dpooled;
}

}  // namespace tessera::graph
