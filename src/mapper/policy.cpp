#include "mapper/policy.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "common/error.h"
#include "common/file_io.h"
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
// Version 1: one output, kPolicyInputs inputs, no layout skip; version 2 adds the output count and
// the flags (bit 0: layout skip, bit 1: sequential decoding) after the hidden size.
constexpr uint32_t kVersionOneOutput = 1;
constexpr uint32_t kVersionOutputs = 2;
constexpr uint32_t kFlagLayoutSkip = 1;
constexpr uint32_t kFlagSequential = 2;

void glorot(Eigen::MatrixXd& w, Rng& rng) {
  double a = std::sqrt(6.0 / static_cast<double>(w.rows() + w.cols()));
  for (int i = 0; i < w.rows(); ++i)
    for (int j = 0; j < w.cols(); ++j) w(i, j) = rng.uniform(-a, a);
}

}  // namespace

Policy::Policy(int hidden, double bound, double sigma_steps, int outputs, int inputs)
    : m_hidden(hidden), m_bound(bound), m_sigma_steps(sigma_steps) {
  TESSERA_CHECK(outputs == 1 || outputs == 2, "policy outputs must be 1 or 2");
  TESSERA_CHECK(inputs == kPolicyInputs || inputs == kPolicyInputsMesh, "policy inputs");
  m_w1 = Eigen::MatrixXd::Zero(inputs, hidden);
  m_w2 = Eigen::MatrixXd::Zero(hidden, hidden);
  m_w3 = Eigen::MatrixXd::Zero(hidden, hidden);
  m_b1 = m_b2 = m_b3 = Eigen::RowVectorXd::Zero(hidden);
  m_w4 = Eigen::MatrixXd::Zero(hidden, outputs);
  m_b4 = Eigen::RowVectorXd::Zero(outputs);
  m_w5 = Eigen::MatrixXd::Zero(hidden, 0);
}

void Policy::set_sequential(bool on) {
  m_w5 = Eigen::MatrixXd::Zero(m_hidden, on ? kHeadFeatures : 0);
  m_b5 = on ? Eigen::RowVectorXd(Eigen::Map<const Eigen::RowVectorXd>(kHeadInit, kHeadFeatures))
            : Eigen::RowVectorXd();
}

Eigen::MatrixXd Policy::head(const PolicyTape& tape) const {
  TESSERA_CHECK(sequential(), "the head of a policy without sequential decoding");
  return (tape.h3 * m_w5).rowwise() + m_b5;
}

void Policy::init(uint64_t seed) {
  Rng rng(seed);
  glorot(m_w1, rng);
  glorot(m_w2, rng);
  glorot(m_w3, rng);
  glorot(m_w4, rng);
  m_b1.setZero();
  m_b2.setZero();
  m_b3.setZero();
  m_b4.setZero();
  set_sequential(sequential());
}

Eigen::MatrixXd Policy::forward(const PolicyInput& in, PolicyTape* tape) const {
  PolicyTape local;
  PolicyTape& t = tape ? *tape : local;
  t.ax = in.adj * in.x.leftCols(inputs());
  t.z1 = (t.ax * m_w1).rowwise() + m_b1;
  t.h1 = relu(t.z1);
  t.ah1 = in.adj * t.h1;
  t.z2 = (t.ah1 * m_w2).rowwise() + m_b2;
  t.h2 = relu(t.z2);
  t.z3 = (t.h2 * m_w3).rowwise() + m_b3;
  t.h3 = relu(t.z3);
  t.z4 = (t.h3 * m_w4).rowwise() + m_b4;
  if (m_layout_skip) t.z4 += in.layout.leftCols(outputs());
  t.mu = m_bound * t.z4.array().tanh();
  return t.mu;
}

Eigen::VectorXd Policy::backward(const PolicyInput& in, const PolicyTape& t,
                                 const Eigen::MatrixXd& g_mu,
                                 const Eigen::MatrixXd* g_theta) const {
  Eigen::MatrixXd th = t.z4.array().tanh();
  Eigen::MatrixXd g_z4 = g_mu.array() * m_bound * (1.0 - th.array().square());
  Eigen::MatrixXd g_w4 = t.h3.transpose() * g_z4;
  Eigen::RowVectorXd g_b4 = g_z4.colwise().sum();
  Eigen::MatrixXd g_h3 = g_z4 * m_w4.transpose();
  Eigen::MatrixXd g_w5 = Eigen::MatrixXd::Zero(m_w5.rows(), m_w5.cols());
  Eigen::RowVectorXd g_b5 = Eigen::RowVectorXd::Zero(m_b5.size());
  if (g_theta && sequential()) {
    g_w5 = t.h3.transpose() * *g_theta;
    g_b5 = g_theta->colwise().sum();
    g_h3 += *g_theta * m_w5.transpose();
  }
  Eigen::MatrixXd g_z3 = g_h3.cwiseProduct(relu_mask(t.z3));
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
  put(g_b4);
  put(g_w5);
  put(g_b5);
  return g;
}

int Policy::num_params() const {
  return static_cast<int>(m_w1.size() + m_b1.size() + m_w2.size() + m_b2.size() + m_w3.size() +
                          m_b3.size() + m_w4.size() + m_b4.size() + m_w5.size() + m_b5.size());
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
  put(m_b4);
  put(m_w5);
  put(m_b5);
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
  get(m_b4);
  get(m_w5);
  get(m_b5);
}

// File format (little-endian): "TSPOLICY", u32 version, u32 inputs, u32 hidden, [u32 outputs, u32
// flags: version 2 only], f64 bound, f64 sigma_steps, u32 parameter count, then the parameters as
// f64 in params() order, and nothing after them. A policy that version 1 describes (one output,
// kPolicyInputs inputs, no layout skip) is written as version 1.
namespace {

constexpr size_t kHeaderBytes = 40;  // magic to parameter count, version 1

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
T take(std::string_view bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

}  // namespace

std::string Policy::encode() const {
  std::string out(kMagic, 8);
  const bool v1 = outputs() == 1 && inputs() == kPolicyInputs && !m_layout_skip && !sequential();
  put(out, v1 ? kVersionOneOutput : kVersionOutputs);
  put(out, static_cast<uint32_t>(inputs()));
  put(out, static_cast<uint32_t>(m_hidden));
  if (!v1) {
    put(out, static_cast<uint32_t>(outputs()));
    put(out, (m_layout_skip ? kFlagLayoutSkip : 0) | (sequential() ? kFlagSequential : 0));
  }
  put(out, m_bound);
  put(out, m_sigma_steps);
  const Eigen::VectorXd p = params();
  put(out, static_cast<uint32_t>(p.size()));
  for (int i = 0; i < p.size(); ++i) put(out, p[i]);
  return out;
}

void Policy::save(const std::string& path) const {
  write_file(path, encode(), "policy file");
}

Policy Policy::decode(std::string_view bytes, const std::string& path) {
  const auto at = [&](size_t offset) { return fmt::format("{}: offset {}", path, offset); };
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw Error(at(0), "not a tessera policy file (bad magic)");
  const auto truncated = [&](size_t header) {
    return Error(at(8), fmt::format("truncated file (reading header): {} bytes, the header has {}",
                                    bytes.size(), header));
  };
  if (bytes.size() < kHeaderBytes) throw truncated(kHeaderBytes);
  const auto version = take<uint32_t>(bytes, 8);
  if (version != kVersionOneOutput && version != kVersionOutputs)
    throw Error(at(8), fmt::format("unsupported version {}", version));
  const size_t o = version == kVersionOutputs ? 8 : 0;  // outputs and flags shift the rest
  const size_t header = kHeaderBytes + o;
  if (bytes.size() < header) throw truncated(header);
  const auto inputs = take<uint32_t>(bytes, 12);
  const auto hidden = take<uint32_t>(bytes, 16);
  const uint32_t outputs = o ? take<uint32_t>(bytes, 20) : 1;
  const uint32_t flags = o ? take<uint32_t>(bytes, 24) : 0;
  const auto bound = take<double>(bytes, 20 + o);
  const auto sigma = take<double>(bytes, 28 + o);
  const auto count = take<uint32_t>(bytes, 36 + o);
  if (inputs != kPolicyInputs && (o == 0 || inputs != kPolicyInputsMesh))
    throw Error(at(12), o ? fmt::format("{} inputs, expected {} or {}", inputs, kPolicyInputs,
                                        kPolicyInputsMesh)
                          : fmt::format("{} inputs, expected {}", inputs, kPolicyInputs));
  if (hidden < 1 || hidden > 4096) throw Error(at(16), fmt::format("bad hidden size {}", hidden));
  if (outputs != 1 && outputs != 2)
    throw Error(at(20), fmt::format("{} outputs, expected 1 or 2", outputs));
  if (flags > (kFlagLayoutSkip | kFlagSequential))
    throw Error(at(24), fmt::format("unknown flags {:#x}", flags));
  if (!(bound > 0.0) || !(sigma > 0.0) || !std::isfinite(bound) || !std::isfinite(sigma))
    throw Error(at(20 + o), "bound and sigma must be finite and > 0");
  Policy pol(static_cast<int>(hidden), bound, sigma, static_cast<int>(outputs),
             static_cast<int>(inputs));
  pol.set_layout_skip(flags & kFlagLayoutSkip);
  pol.set_sequential(flags & kFlagSequential);
  if (count != static_cast<uint32_t>(pol.num_params()))
    throw Error(at(36 + o), fmt::format("{} parameters, expected {}", count, pol.num_params()));
  const size_t size = header + 8 * size_t{count};
  if (bytes.size() < size)
    throw Error(at(bytes.size()),
                fmt::format("truncated file (reading parameters): {} bytes, {} parameters need {}",
                            bytes.size(), count, size));
  if (bytes.size() > size)
    throw Error(at(size), fmt::format("{} bytes after the last parameter", bytes.size() - size));
  Eigen::VectorXd p(count);
  for (uint32_t i = 0; i < count; ++i) {
    p[i] = take<double>(bytes, header + 8 * size_t{i});
    if (!std::isfinite(p[i])) throw Error(at(header + 8 * size_t{i}), "non-finite parameter");
  }
  pol.set_params(p);
  return pol;
}

Policy Policy::load(const std::string& path) {
  return decode(read_file(path, "policy file"), path);
}

}  // namespace tessera::mapper
