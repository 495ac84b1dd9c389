#include "cli/bench/embedding_bench.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/int_math.h"
#include "common/splitmix64.h"
#include "core/sparse_core.h"
#include "core/state.h"
#include "numerics/embedding_bag.h"
#include "system/sparse_shard_lookup.h"

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

void check_shape(const EmbeddingBenchShape& s) {
  if (s.tables < 1 || s.rows < 1 || s.dim < 1 || s.bag < 1 || s.batch < 1)
    throw UsageError("bench embedding", "--tables, --rows, --dim, --bag and --batch must be >= 1");
  if (!(s.zipf >= 0)) throw UsageError("bench embedding", "--zipf must be >= 0");
}

// The ids of `processors` processors' bags (the header's draw): [processor][table].
std::vector<std::vector<std::vector<uint32_t>>> draw_ids(const EmbeddingBenchShape& s,
                                                         int processors) {
  const Zipf zipf(s.rows, s.zipf);
  SplitMix64 rng(s.seed);
  std::vector<std::vector<std::vector<uint32_t>>> ids(static_cast<size_t>(processors));
  for (auto& mine : ids) {
    mine.resize(static_cast<size_t>(s.tables));
    for (auto& table : mine)
      for (int64_t i = 0; i < s.batch * s.bag; ++i)
        table.push_back(static_cast<uint32_t>(zipf.draw(rng)));
  }
  return ids;
}

// Throws unless every bag's `got(bag, word)` equals the host sum of its rows in id order.
template <typename Got>
void check_sums(const EmbeddingBenchShape& s, int t, const std::vector<uint32_t>& ids, Got&& got) {
  std::vector<float> want(static_cast<size_t>(s.dim)), row(static_cast<size_t>(s.dim));
  for (int64_t b = 0; b < s.batch; ++b) {
    std::fill(want.begin(), want.end(), 0.0f);
    for (int64_t i = b * s.bag; i < (b + 1) * s.bag; ++i) {
      for (int64_t c = 0; c < s.dim; ++c)
        row[static_cast<size_t>(c)] = table_value(t, ids[static_cast<size_t>(i)], c);
      numerics::bag_accumulate(want.data(), row.data(), s.dim);
    }
    for (int64_t c = 0; c < s.dim; ++c)
      if (got(b, c) != std::bit_cast<uint32_t>(want[static_cast<size_t>(c)]))
        throw Error("bench embedding",
                    fmt::format("table {} bag {} word {} differs from the host sum", t, b, c));
  }
}

// sim_seconds, efficiency and lookups per simulated second from the cycles, lookups and bound.
void finish(EmbeddingBenchResult& r, double clock_hz) {
  r.sim_seconds = static_cast<double>(r.sim_cycles) / clock_hz;
  r.efficiency = r.bound_seconds / r.sim_seconds;
  r.lookups_per_sim_second = static_cast<double>(r.lookups) / r.sim_seconds;
}

// The row stream's limit (EmbeddingBenchResult::row_stream_limit).
const char* row_stream_limit(const core::SparseCoreSpec& u) {
  const double x = static_cast<double>(u.hbm_request_bytes) / u.hbm_bytes_per_cycle;
  return x >= (static_cast<double>(u.hbm_latency) + x) / static_cast<double>(u.hbm_outstanding)
             ? "bandwidth"
             : "outstanding";
}

}  // namespace

EmbeddingBenchResult run_embedding_bench(const core::CoreSpec& spec, const EmbeddingBenchShape& s) {
  check_shape(s);
  const int64_t table_words = s.rows * s.dim, n = s.batch * s.bag;
  const int64_t data = s.tables * table_words;
  const int64_t per_table = (s.batch + 1) + n + s.batch * s.dim;  // offsets, ids, output
  const int64_t words = spec.hbm_bytes / 4;
  if (data + s.tables * per_table > words)
    throw Error("bench embedding",
                fmt::format("{} tables of {} x {} words and their bags do not fit the {} words of "
                            "HBM (one chip: spread them over chips with --chips)",
                            s.tables, s.rows, s.dim, words));
  core::ArchState st(spec);
  core::SparseCore sc(spec);
  const std::vector<std::vector<uint32_t>> ids = draw_ids(s, 1).front();
  std::vector<uint32_t> offsets(static_cast<size_t>(s.batch + 1));
  for (int64_t b = 0; b <= s.batch; ++b) offsets[static_cast<size_t>(b)] = b * s.bag;
  std::vector<int64_t> out(static_cast<size_t>(s.tables));
  for (int t = 0; t < s.tables; ++t) {
    const int64_t base = int64_t{t} * table_words;
    const int index = sc.add_table({fmt::format("t{}", t), base, s.rows, s.dim}, words);
    const std::vector<uint32_t>& mine = ids[static_cast<size_t>(t)];
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
  const core::SparseCoreSpec& u = spec.sparse;
  r.row_bytes = r.lookups * sc.requests_of(4 * s.dim) * u.hbm_request_bytes;
  r.bound_seconds = static_cast<double>(r.row_bytes) / u.hbm_bytes_per_cycle / spec.clock_hz;
  finish(r, spec.clock_hz);
  r.row_stream_limit = row_stream_limit(u);
  for (int t = 0; t < s.tables; ++t)
    check_sums(s, t, ids[static_cast<size_t>(t)], [&](int64_t b, int64_t c) {
      return st.hbm.read(out[static_cast<size_t>(t)] + b * s.dim + c);
    });
  r.values_checked = true;
  return r;
}

EmbeddingBenchResult run_sharded_embedding_bench(const core::CoreSpec& spec,
                                                 const system::SystemSpec& sys,
                                                 const EmbeddingBenchShape& s,
                                                 system::ShardPlacement placement,
                                                 ThreadPool* pool) {
  check_shape(s);
  const int P = sys.processors();
  const system::ShardMap map(placement, P);
  std::vector<system::ShardedTable> tables;
  for (int t = 0; t < s.tables; ++t) tables.push_back({fmt::format("t{}", t), s.rows, s.dim});
  const auto ids = draw_ids(s, P);
  std::vector<uint32_t> offsets(static_cast<size_t>(s.batch + 1));
  for (int64_t b = 0; b <= s.batch; ++b) offsets[static_cast<size_t>(b)] = b * s.bag;
  std::vector<std::vector<system::LookupBags>> bags(static_cast<size_t>(P));
  for (int p = 0; p < P; ++p)
    for (int t = 0; t < s.tables; ++t)
      bags[static_cast<size_t>(p)].push_back(
          {offsets, ids[static_cast<size_t>(p)][static_cast<size_t>(t)]});
  const system::ShardedLookupResult l = system::sharded_lookup(
      spec, sys, map, tables, bags, numerics::Combiner::Sum, table_value, pool);
  EmbeddingBenchResult r;
  r.processors = P;
  r.sim_cycles = l.cycles;
  r.lookups = int64_t{P} * s.tables * s.batch * s.bag;
  const core::SparseCoreSpec& u = spec.sparse;
  const int64_t row_request_bytes = ceil_div(4 * s.dim, u.hbm_request_bytes) * u.hbm_request_bytes;
  r.row_bytes = r.lookups * row_request_bytes;
  r.hbm_bound_seconds = static_cast<double>(l.owner_row_bytes + l.remote_row_bytes) /
                        u.hbm_bytes_per_cycle / spec.clock_hz;
  r.busiest_link_bytes = l.busiest_link_id_bytes + l.busiest_link_row_bytes;
  r.exchange_bound_seconds =
      static_cast<double>(r.busiest_link_bytes) / (sys.link_gbytes_per_s * 1e9) +
      2.0 * l.max_hops * sys.link_latency_ns * 1e-9;
  r.bound_seconds = r.hbm_bound_seconds + r.exchange_bound_seconds;
  finish(r, spec.clock_hz);
  r.row_stream_limit = row_stream_limit(u);
  r.id_bytes = l.id_bytes;
  r.exchange_row_bytes = l.row_bytes;
  r.max_hops = l.max_hops;
  r.packets = l.packets;
  const auto sec = [&](int64_t cycles) { return static_cast<double>(cycles) / spec.clock_hz; };
  r.route_seconds = sec(l.span.route);
  r.ids_seconds = sec(l.span.ids);
  r.gather_seconds = sec(l.span.gather);
  r.rows_seconds = sec(l.span.rows);
  r.combine_seconds = sec(l.span.combine);
  for (int p = 0; p < P; ++p)
    for (int t = 0; t < s.tables; ++t) {
      const std::vector<float>& got = l.pooled[static_cast<size_t>(p)][static_cast<size_t>(t)];
      check_sums(s, t, ids[static_cast<size_t>(p)][static_cast<size_t>(t)],
                 [&](int64_t b, int64_t c) {
                   return std::bit_cast<uint32_t>(got[static_cast<size_t>(b * s.dim + c)]);
                 });
    }
  r.values_checked = true;
  return r;
}

}  // namespace tessera::bench
