#include "cli/bench/embedding_bench.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "core/sparse_core.h"
#include "core/state.h"
#include "numerics/embedding_bag.h"

namespace tessera::bench {

namespace {

// Zipf(s) over [0, n) by inverse CDF (the header's rule).
class Zipf {
 public:
  Zipf(int64_t n, double s) : m_cdf(static_cast<size_t>(n)) {
    double sum = 0;
    for (int64_t k = 0; k < n; ++k)
      m_cdf[static_cast<size_t>(k)] = sum += std::pow(static_cast<double>(k + 1), -s);
  }
  int64_t draw(SplitMix64& rng) const {
    const double u = rng.unit53() * m_cdf.back();
    const auto it = std::upper_bound(m_cdf.begin(), m_cdf.end(), u);
    return std::min<int64_t>(it - m_cdf.begin(), static_cast<int64_t>(m_cdf.size()) - 1);
  }

 private:
  std::vector<double> m_cdf;
};

float table_value(int t, int64_t row, int64_t col) {
  return std::ldexp(static_cast<float>((t * 7 + row * 37 + col * 11) % 29) - 14.0f, -4);
}

}  // namespace

EmbeddingBenchResult run_embedding_bench(const core::CoreSpec& spec, const EmbeddingBenchShape& s) {
  if (s.tables < 1 || s.rows < 1 || s.dim < 1 || s.bag < 1 || s.batch < 1)
    throw UsageError("bench embedding", "--tables, --rows, --dim, --bag and --batch must be >= 1");
  if (!(s.zipf >= 0)) throw UsageError("bench embedding", "--zipf must be >= 0");
  const int64_t table_words = s.rows * s.dim, n = s.batch * s.bag;
  const int64_t data = s.tables * table_words;
  const int64_t per_table = (s.batch + 1) + n + s.batch * s.dim;  // offsets, ids, output
  const int64_t words = spec.hbm_bytes / 4;
  if (data + s.tables * per_table > words)
    throw Error("bench embedding",
                fmt::format("{} tables of {} x {} words and their bags do not fit the {} words of "
                            "HBM (one chip: tables over chips are not built)",
                            s.tables, s.rows, s.dim, words));
  core::ArchState st(spec);
  core::SparseCore sc(spec);
  const Zipf zipf(s.rows, s.zipf);
  SplitMix64 rng(s.seed);
  std::vector<std::vector<uint32_t>> ids(static_cast<size_t>(s.tables));
  std::vector<uint32_t> offsets(static_cast<size_t>(s.batch + 1));
  for (int64_t b = 0; b <= s.batch; ++b) offsets[static_cast<size_t>(b)] = b * s.bag;
  std::vector<int64_t> out(static_cast<size_t>(s.tables));
  for (int t = 0; t < s.tables; ++t) {
    const int64_t base = int64_t{t} * table_words;
    const int index = sc.add_table({fmt::format("t{}", t), base, s.rows, s.dim}, words);
    std::vector<uint32_t>& mine = ids[static_cast<size_t>(t)];
    for (int64_t i = 0; i < n; ++i) mine.push_back(static_cast<uint32_t>(zipf.draw(rng)));
    for (uint32_t id : std::set<uint32_t>(mine.begin(), mine.end()))  // only the touched rows
      for (int64_t c = 0; c < s.dim; ++c)
        st.hbm.write(base + id * s.dim + c, std::bit_cast<uint32_t>(table_value(t, id, c)));
    const int64_t at = data + t * per_table;
    st.hbm.write_block(at, offsets.data(), s.batch + 1);
    st.hbm.write_block(at + s.batch + 1, mine.data(), n);
    out[static_cast<size_t>(t)] = at + s.batch + 1 + n;
    sc.enqueue({core::SparseGather{index,
                                   {at + s.batch + 1, at, s.batch},
                                   numerics::Combiner::Sum,
                                   core::SparseDest::Hbm,
                                   out[static_cast<size_t>(t)]}});
  }
  EmbeddingBenchResult r;
  r.sim_cycles = sc.run(st, 0);
  r.lookups = s.tables * n;
  r.sim_seconds = static_cast<double>(r.sim_cycles) / spec.clock_hz;
  const core::SparseCoreSpec& u = spec.sparse;
  r.row_bytes = r.lookups * sc.requests_of(4 * s.dim) * u.hbm_request_bytes;
  r.bound_seconds = static_cast<double>(r.row_bytes) / u.hbm_bytes_per_cycle / spec.clock_hz;
  r.efficiency = r.bound_seconds / r.sim_seconds;
  r.lookups_per_sim_second = static_cast<double>(r.lookups) / r.sim_seconds;
  const double x = static_cast<double>(u.hbm_request_bytes) / u.hbm_bytes_per_cycle;
  r.row_stream_limit =
      x >= (static_cast<double>(u.hbm_latency) + x) / static_cast<double>(u.hbm_outstanding)
          ? "bandwidth"
          : "outstanding";
  // Values: every bag's sum in id order.
  std::vector<float> want(static_cast<size_t>(s.dim));
  for (int t = 0; t < s.tables; ++t)
    for (int64_t b = 0; b < s.batch; ++b) {
      std::fill(want.begin(), want.end(), 0.0f);
      for (int64_t i = b * s.bag; i < (b + 1) * s.bag; ++i) {
        const uint32_t id = ids[static_cast<size_t>(t)][static_cast<size_t>(i)];
        std::vector<float> row(static_cast<size_t>(s.dim));
        for (int64_t c = 0; c < s.dim; ++c) row[static_cast<size_t>(c)] = table_value(t, id, c);
        numerics::bag_accumulate(want.data(), row.data(), s.dim);
      }
      for (int64_t c = 0; c < s.dim; ++c)
        if (st.hbm.read(out[static_cast<size_t>(t)] + b * s.dim + c) !=
            std::bit_cast<uint32_t>(want[static_cast<size_t>(c)]))
          throw Error("bench embedding",
                      fmt::format("table {} bag {} word {} differs from the host sum", t, b, c));
    }
  r.values_checked = true;
  return r;
}

}  // namespace tessera::bench
