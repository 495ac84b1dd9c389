#include "runtime/dlrm_data.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "common/splitmix64.h"

namespace tessera::runtime {

namespace {

size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

uint64_t mix(int t, int64_t id) {
  return SplitMix64(static_cast<uint64_t>(t + 1) * 0xbf58476d1ce4e5b9ull ^
                    static_cast<uint64_t>(id) * 0x94d049bb133111ebull)
      .next();
}

}  // namespace

DlrmData::DlrmData(const DlrmDataSpec& spec) : m_spec(spec) {
  if (spec.dense < 1 || spec.tables < 1 || spec.bag < 1 || spec.rows < 1 || !(spec.zipf > 0))
    throw Error("dlrm data",
                fmt::format("dense {} tables {} bag {} rows {} zipf {}: all must be positive",
                            spec.dense, spec.tables, spec.bag, spec.rows, spec.zipf));
}

uint32_t DlrmData::zipf_id(double u) const {
  const double n = static_cast<double>(m_spec.rows) + 1, e = 1 - m_spec.zipf;
  const double x = e == 0 ? std::pow(n, u) : std::pow(1 + u * (std::pow(n, e) - 1), 1 / e);
  return static_cast<uint32_t>(std::min<int64_t>(static_cast<int64_t>(x), m_spec.rows) - 1);
}

double DlrmData::weight(int t, int64_t id) const {
  return 2 * SplitMix64(m_spec.teacher_seed ^ mix(t, id)).unit53() - 1;
}

DlrmBatch DlrmData::batch(int64_t first, int n) const {
  const DlrmDataSpec& s = m_spec;
  DlrmBatch b;
  b.n = n;
  b.dense.resize(at(int64_t{n} * s.dense));
  b.ids.assign(at(s.tables), std::vector<uint32_t>(at(int64_t{n} * s.bag)));
  b.labels.resize(at(n));
  for (int i = 0; i < n; ++i) {
    SplitMix64 rng(s.seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(first + i + 1)));
    for (int k = 0; k < s.dense; ++k)
      b.dense[at(int64_t{i} * s.dense + k)] =
          static_cast<float>((2 * rng.unit53() - 1) * std::sqrt(3.0));
    for (int t = 0; t < s.tables; ++t)
      for (int j = 0; j < s.bag; ++j) {
        b.ids[at(t)][at(int64_t{i} * s.bag + j)] = zipf_id(rng.unit53());
      }
    const double p = 1.0 / (1.0 + std::exp(-teacher_logit(b, i)));
    b.labels[at(i)] = rng.unit53() < p ? 1.0f : 0.0f;
  }
  return b;
}

double DlrmData::teacher_logit(const DlrmBatch& b, int i) const {
  const DlrmDataSpec& s = m_spec;
  double dense = 0;
  for (int k = 0; k < s.dense; ++k) dense += weight(-1, k) * b.dense[at(int64_t{i} * s.dense + k)];
  std::vector<double> sums(at(s.tables), 0.0);
  double sparse = 0;
  for (int t = 0; t < s.tables; ++t) {
    for (int j = 0; j < s.bag; ++j)
      sums[at(t)] += weight(t, b.ids[at(t)][at(int64_t{i} * s.bag + j)]);
    sparse += sums[at(t)];
  }
  const double cross = s.tables > 1 ? sums[0] * sums[1] / s.bag : 0.0;
  return s.teacher_dense * dense / std::sqrt(static_cast<double>(s.dense)) +
         s.teacher_sparse * sparse / std::sqrt(static_cast<double>(s.tables) * s.bag) +
         s.teacher_cross * cross + s.teacher_bias;
}

}  // namespace tessera::runtime
