// The tables, values and bags the sharded-table tests share, and one sparse core gathering from
// the whole table: the reference a sharded lookup must equal bit for bit.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/sparse_core.h"
#include "core/state.h"
#include "small_spec.h"
#include "system/sparse_shard_lookup.h"

namespace tessera::system {

inline float value(int t, int64_t row, int64_t col) {
  return std::ldexp(static_cast<float>((t * 5 + row * 37 + col * 11) % 29) - 14.0f, -3) + 0.1f;
}

inline std::vector<float> single_chip(const ShardedTable& tab, int t, const LookupBags& b,
                                      numerics::Combiner c) {
  const core::CoreSpec spec = small_spec();
  core::ArchState st(spec);
  core::SparseCore sc(spec);
  std::vector<uint32_t> row(static_cast<size_t>(tab.dim));
  for (int64_t r = 0; r < tab.rows; ++r) {
    for (int64_t k = 0; k < tab.dim; ++k)
      row[static_cast<size_t>(k)] = std::bit_cast<uint32_t>(value(t, r, k));
    st.hbm.write_block(r * tab.dim, row.data(), tab.dim);
  }
  const int64_t offsets = tab.rows * tab.dim, bags = static_cast<int64_t>(b.offsets.size()) - 1;
  const int64_t ids = offsets + bags + 1, out = ids + static_cast<int64_t>(b.ids.size());
  st.hbm.write_block(offsets, b.offsets.data(), bags + 1);
  st.hbm.write_block(ids, b.ids.data(), static_cast<int64_t>(b.ids.size()));
  const int index = sc.add_table({tab.name, 0, tab.rows, tab.dim}, st.hbm.size());
  sc.enqueue({core::SparseGather{index, {ids, offsets, bags}, c, core::SparseDest::Hbm, out}});
  sc.run(st, 0);
  const int64_t words =
      (c == numerics::Combiner::None ? static_cast<int64_t>(b.ids.size()) : bags) * tab.dim;
  std::vector<float> v(static_cast<size_t>(words));
  st.hbm.read_block(out, reinterpret_cast<uint32_t*>(v.data()), words);
  return v;
}

inline void expect_bits_equal(const std::vector<float>& got, const std::vector<float>& want,
                              const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << what << " word " << i;
}

// Three tables (10 rows: not divisible by 4; 3 rows: fewer than the processors; 16 rows) and
// bags with the edge cases: empty bags (first, middle, last), repeated ids, and on processor 2
// every id of table 2 a multiple of 4 (all owned by processor 0 under mod placement).
inline const std::vector<ShardedTable> kTables = {{"a", 10, 4}, {"b", 3, 8}, {"c", 16, 5}};

inline std::vector<std::vector<LookupBags>> edge_bags(int processors) {
  std::vector<std::vector<LookupBags>> bags(static_cast<size_t>(processors));
  for (int p = 0; p < processors; ++p) {
    auto& mine = bags[static_cast<size_t>(p)];
    mine.push_back({{0, 0, 3, 3, 7, 7}, {9, 9, 1, static_cast<uint32_t>(p), 3, 3, 9}});
    mine.push_back({{0, 2, 2, 5}, {2, 2, 0, 1, static_cast<uint32_t>(p % 3)}});
    if (p == 2)
      mine.push_back({{0, 4, 6}, {0, 4, 8, 12, 12, 0}});
    else
      mine.push_back({{0, 1, 3}, {15, static_cast<uint32_t>(p), 7}});
  }
  return bags;
}

}  // namespace tessera::system
