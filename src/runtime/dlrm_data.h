// The DLRM workload's data (docs/sparse-core.md, "DLRM"): a seeded generator of click samples, each
// a pure function of (seed, index), so any split of a batch over processors or ranks sees the
// same samples.
//
// Sample i draws from SplitMix64(seed ^ (0x9e3779b97f4a7c15 * (i + 1))), in this order:
//   dense   F features, each (2 unit53() - 1) sqrt(3) (uniform, mean 0, variance 1);
//   ids     per table t = 0..T-1, `bag` ids, each Zipf-distributed over [0, rows): with
//           u = unit53(), x = (1 + u ((rows + 1)^(1 - zipf) - 1))^(1 / (1 - zipf)) inverts the
//           power law x^-zipf on [1, rows + 1) (zipf != 1; for 1, x = (rows + 1)^u), and the id is
//           min(floor(x), rows) - 1: id k has probability close to (k + 1)^-zipf / H; the hot rows
//           are the low ones;
//   label   1 when unit53() < sigmoid(teacher logit), else 0.
// The planted teacher: with w_t(id) = (2 u - 1) for u the first unit53() of
// SplitMix64(teacher_seed ^ mix(t, id)) (a scalar per table row) and a_k likewise per dense
// feature (table -1),
//   s_t   = sum of w_t over the sample's bag of table t
//   logit = teacher_dense sum_k a_k x_k / sqrt(F) + teacher_sparse sum_t s_t / sqrt(T bag)
//           + teacher_cross s_0 s_1 / bag + teacher_bias
// so the labels depend on the dense features, on every table's rows and on one pairwise
// interaction, and log loss and AUC measure how much of the teacher a model recovers.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::runtime {

struct DlrmDataSpec {
  int dense = 13, tables = 8, bag = 4;
  int64_t rows = int64_t{1} << 18;
  double zipf = 1.05;
  uint64_t seed = 0;
  uint64_t teacher_seed = 0x7ea0c4e5;
  double teacher_dense = 1.0, teacher_sparse = 2.0, teacher_cross = 1.0, teacher_bias = -0.5;
};

// n samples: dense n x F, ids[t] n x bag (bag b of table t: ids[t][b bag, (b + 1) bag)), labels 0
// or 1.
struct DlrmBatch {
  int n = 0;
  std::vector<float> dense;
  std::vector<std::vector<uint32_t>> ids;
  std::vector<float> labels;
};

class DlrmData {
 public:
  // Throws tessera::Error for sizes < 1 or zipf <= 0.
  explicit DlrmData(const DlrmDataSpec& spec);
  const DlrmDataSpec& spec() const { return m_spec; }
  // Samples [first, first + n).
  DlrmBatch batch(int64_t first, int n) const;
  // The teacher's logit of one sample (tests; the Bayes-optimal score).
  double teacher_logit(const DlrmBatch& b, int i) const;

 private:
  double weight(int t, int64_t id) const;
  uint32_t zipf_id(double u) const;

  DlrmDataSpec m_spec;
};

}  // namespace tessera::runtime
