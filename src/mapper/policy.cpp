#include "mapper/policy.h"

#include <cmath>
#include <cstring>
#include <fstream>

#include "common/error.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

Eigen::MatrixXd relu(const Eigen::MatrixXd& z) {
  return z.cwiseMax(0.0);
}
Eigen::MatrixXd relu_mask(const Eigen::MatrixXd& z) {
  return (z.array() > 0.0).cast<double>().matrix();
}

constexpr char kMagic[8] = {'T', 'S', 'P', 'O', 'L', 'I', 'C', 'Y'};
constexpr uint32_t kVersion = 1;

void glorot(Eigen::MatrixXd& w, Rng& rng) {
  double a = std::sqrt(6.0 / static_cast<double>(w.rows() + w.cols()));
  for (int i = 0; i < w.rows(); ++i)
    for (int j = 0; j < w.cols(); ++j) w(i, j) = rng.uniform(-a, a);
}

}  // namespace

Policy::Policy(int hidden, double bound, double sigma_steps)
    : m_hidden(hidden), m_bound(bound), m_sigma_steps(sigma_steps) {
  m_w1 = Eigen::MatrixXd::Zero(kPolicyInputs, hidden);
  m_w2 = Eigen::MatrixXd::Zero(hidden, hidden);
  m_w3 = Eigen::MatrixXd::Zero(hidden, hidden);
  m_b1 = m_b2 = m_b3 = Eigen::RowVectorXd::Zero(hidden);
  m_w4 = Eigen::VectorXd::Zero(hidden);
}

void Policy::init(uint64_t seed) {
  Rng rng(seed);
  glorot(m_w1, rng);
  glorot(m_w2, rng);
  glorot(m_w3, rng);
  Eigen::MatrixXd w4(m_hidden, 1);
  glorot(w4, rng);
  m_w4 = w4.col(0);
  m_b1.setZero();
  m_b2.setZero();
  m_b3.setZero();
  m_b4 = 0.0;
}

Eigen::VectorXd Policy::forward(const PolicyInput& in, PolicyTape* tape) const {
  PolicyTape local;
  PolicyTape& t = tape ? *tape : local;
  t.ax = in.adj * in.x;
  t.z1 = (t.ax * m_w1).rowwise() + m_b1;
  t.h1 = relu(t.z1);
  t.ah1 = in.adj * t.h1;
  t.z2 = (t.ah1 * m_w2).rowwise() + m_b2;
  t.h2 = relu(t.z2);
  t.z3 = (t.h2 * m_w3).rowwise() + m_b3;
  t.h3 = relu(t.z3);
  t.z4 = (t.h3 * m_w4).array() + m_b4;
  t.mu = m_bound * t.z4.array().tanh();
  return t.mu;
}

Eigen::VectorXd Policy::backward(const PolicyInput& in, const PolicyTape& t,
                                 const Eigen::VectorXd& g_mu) const {
  Eigen::VectorXd th = t.z4.array().tanh();
  Eigen::VectorXd g_z4 = g_mu.array() * m_bound * (1.0 - th.array().square());
  Eigen::VectorXd g_w4 = t.h3.transpose() * g_z4;
  double g_b4 = g_z4.sum();
  Eigen::MatrixXd g_z3 = (g_z4 * m_w4.transpose()).cwiseProduct(relu_mask(t.z3));
  Eigen::MatrixXd g_w3 = t.h2.transpose() * g_z3;
  Eigen::RowVectorXd g_b3 = g_z3.colwise().sum();
  Eigen::MatrixXd g_z2 = (g_z3 * m_w3.transpose()).cwiseProduct(relu_mask(t.z2));
  Eigen::MatrixXd g_w2 = t.ah1.transpose() * g_z2;
  Eigen::RowVectorXd g_b2 = g_z2.colwise().sum();
  Eigen::MatrixXd g_h1 = in.adj.transpose() * (g_z2 * m_w2.transpose());
  Eigen::MatrixXd g_z1 = g_h1.cwiseProduct(relu_mask(t.z1));
  Eigen::MatrixXd g_w1 = t.ax.transpose() * g_z1;
  Eigen::RowVectorXd g_b1 = g_z1.colwise().sum();
  Eigen::VectorXd g(num_params());
  int o = 0;
  auto put = [&](const auto& m) {
    for (int j = 0; j < m.cols(); ++j)
      for (int i = 0; i < m.rows(); ++i) g[o++] = m(i, j);
  };
  put(g_w1);
  put(g_b1);
  put(g_w2);
  put(g_b2);
  put(g_w3);
  put(g_b3);
  put(g_w4);
  g[o++] = g_b4;
  return g;
}

int Policy::num_params() const {
  return static_cast<int>(m_w1.size() + m_b1.size() + m_w2.size() + m_b2.size() + m_w3.size() +
                          m_b3.size() + m_w4.size() + 1);
}

Eigen::VectorXd Policy::params() const {
  Eigen::VectorXd p(num_params());
  int o = 0;
  auto put = [&](const auto& m) {
    for (int j = 0; j < m.cols(); ++j)
      for (int i = 0; i < m.rows(); ++i) p[o++] = m(i, j);
  };
  put(m_w1);
  put(m_b1);
  put(m_w2);
  put(m_b2);
  put(m_w3);
  put(m_b3);
  put(m_w4);
  p[o++] = m_b4;
  return p;
}

void Policy::set_params(const Eigen::VectorXd& p) {
  TESSERA_CHECK(p.size() == num_params(), "policy parameter count");
  int o = 0;
  auto get = [&](auto& m) {
    for (int j = 0; j < m.cols(); ++j)
      for (int i = 0; i < m.rows(); ++i) m(i, j) = p[o++];
  };
  get(m_w1);
  get(m_b1);
  get(m_w2);
  get(m_b2);
  get(m_w3);
  get(m_b3);
  get(m_w4);
  m_b4 = p[o++];
}

// File format (little-endian): "TSPOLICY", u32 version, u32 inputs, u32 hidden, f64 bound,
// f64 sigma_steps, u32 parameter count, then the parameters as f64 in params() order.
void Policy::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path, "cannot open file for writing");
  auto u32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  auto f64 = [&](double v) { out.write(reinterpret_cast<const char*>(&v), 8); };
  out.write(kMagic, 8);
  u32(kVersion);
  u32(kPolicyInputs);
  u32(static_cast<uint32_t>(m_hidden));
  f64(m_bound);
  f64(m_sigma_steps);
  Eigen::VectorXd p = params();
  u32(static_cast<uint32_t>(p.size()));
  for (int i = 0; i < p.size(); ++i) f64(p[i]);
  if (!out) throw Error(path, "write failed");
}

Policy Policy::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "cannot open policy file");
  auto need = [&](size_t off, const char* what) {
    if (!in)
      throw Error(fmt::format("{}: offset {}", path, off),
                  fmt::format("truncated file (reading {})", what));
  };
  char magic[8];
  in.read(magic, 8);
  need(0, "magic");
  if (std::memcmp(magic, kMagic, 8) != 0)
    throw Error(path + ": offset 0", "not a tessera policy file (bad magic)");
  uint32_t version = 0, inputs = 0, hidden = 0, count = 0;
  double bound = 0.0, sigma = 0.0;
  in.read(reinterpret_cast<char*>(&version), 4);
  in.read(reinterpret_cast<char*>(&inputs), 4);
  in.read(reinterpret_cast<char*>(&hidden), 4);
  in.read(reinterpret_cast<char*>(&bound), 8);
  in.read(reinterpret_cast<char*>(&sigma), 8);
  in.read(reinterpret_cast<char*>(&count), 4);
  need(8, "header");
  if (version != kVersion)
    throw Error(path + ": offset 8", fmt::format("unsupported version {}", version));
  if (inputs != kPolicyInputs)
    throw Error(path + ": offset 12", fmt::format("{} inputs, expected {}", inputs, kPolicyInputs));
  if (hidden < 1 || hidden > 4096)
    throw Error(path + ": offset 16", fmt::format("bad hidden size {}", hidden));
  if (!(bound > 0.0) || !(sigma > 0.0))
    throw Error(path + ": offset 20", "bound and sigma must be > 0");
  Policy pol(static_cast<int>(hidden), bound, sigma);
  if (count != static_cast<uint32_t>(pol.num_params()))
    throw Error(path + ": offset 36",
                fmt::format("{} parameters, expected {}", count, pol.num_params()));
  Eigen::VectorXd p(count);
  for (uint32_t i = 0; i < count; ++i) {
    in.read(reinterpret_cast<char*>(&p[i]), 8);
    need(40 + 8 * i, "parameters");
    if (!std::isfinite(p[i]))
      throw Error(fmt::format("{}: offset {}", path, 40 + 8 * i), "non-finite parameter");
  }
  pol.set_params(p);
  return pol;
}

Eigen::VectorXd position_log_probs(double mu, int m, double bound, double sigma_steps) {
  Eigen::VectorXd lp(m);
  if (m == 1) {
    lp[0] = 0.0;
    return lp;
  }
  const double step = 2.0 * bound / (m - 1);
  const double sigma = sigma_steps * step;
  for (int j = 0; j < m; ++j) {
    double d = (-bound + j * step - mu) / sigma;
    lp[j] = -0.5 * d * d;
  }
  double mx = lp.maxCoeff();
  double lse = mx + std::log((lp.array() - mx).exp().sum());
  return lp.array() - lse;
}

}  // namespace tessera::mapper
