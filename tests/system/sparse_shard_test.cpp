// Tables spread over processors (system/sparse_shard.h) and their lookups over the fabric
// (system/sparse_shard_lookup.h): the placement's arithmetic, results bit for bit those of one
// sparse core gathering from the whole table (rows not divisible by the processors, tables with
// fewer rows than processors, empty bags, repeated ids, every id on one processor, both
// placements, every combiner, two cores per chip), the same results and times on any number of
// host threads, and the errors.
#include "system/sparse_shard.h"

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "core/sparse_core.h"
#include "core/state.h"
#include "small_spec.h"
#include "sparse_shard_cases.h"
#include "support/error_of.h"
#include "system/sparse_shard_lookup.h"

namespace tessera::system {
namespace {

using numerics::Combiner;

TEST(ShardMap, ModPlacementSpreadsRowsNotDivisibleByTheProcessors) {
  const ShardMap m(ShardPlacement::kMod, 4);
  // 10 rows: processors 0 and 1 hold 3 (rows 0, 4, 8 and 1, 5, 9), 2 and 3 hold 2.
  EXPECT_EQ(m.local_rows(0, 10, 0), 3);
  EXPECT_EQ(m.local_rows(0, 10, 1), 3);
  EXPECT_EQ(m.local_rows(0, 10, 2), 2);
  EXPECT_EQ(m.local_rows(0, 10, 3), 2);
  EXPECT_EQ(m.owner(0, 9), 1);
  EXPECT_EQ(m.local_row(9), 2);
  // Fewer rows than processors: the last ones hold none.
  EXPECT_EQ(m.local_rows(0, 2, 1), 1);
  EXPECT_EQ(m.local_rows(0, 2, 2), 0);
  EXPECT_EQ(m.local_rows(0, 2, 3), 0);
}

TEST(ShardMap, TablePlacementPutsEachTableWholeOnOneProcessor) {
  const ShardMap m(ShardPlacement::kTable, 3);
  EXPECT_EQ(m.owner(4, 123), 1);
  EXPECT_EQ(m.local_row(123), 123);
  EXPECT_EQ(m.local_rows(4, 50, 1), 50);
  EXPECT_EQ(m.local_rows(4, 50, 0), 0);
  EXPECT_EQ(shard_placement_from_name("table", "--placement"), ShardPlacement::kTable);
  EXPECT_NE(testing::error_of([] {
              shard_placement_from_name("rows", "--placement");
            }).find("mod or table"),
            std::string::npos);
  EXPECT_THROW(ShardMap(ShardPlacement::kMod, 0), Error);
}

struct Case {
  int chips, cores;
  ShardPlacement placement;
  Combiner combiner;
};

class ShardedLookup : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedLookup, EqualsOneSparseCoreGatheringFromTheWholeTable) {
  const Case c = GetParam();
  const SystemSpec sys = small_ring(c.chips, c.cores);
  const int P = sys.processors();
  const auto bags = edge_bags(P);
  const ShardedLookupResult r =
      sharded_lookup(small_spec(), sys, ShardMap(c.placement, P), kTables, bags, c.combiner, value);
  ASSERT_EQ(r.pooled.size(), static_cast<size_t>(P));
  for (int p = 0; p < P; ++p)
    for (int t = 0; t < 3; ++t)
      expect_bits_equal(
          r.pooled[static_cast<size_t>(p)][static_cast<size_t>(t)],
          single_chip(kTables[static_cast<size_t>(t)], t,
                      bags[static_cast<size_t>(p)][static_cast<size_t>(t)], c.combiner),
          "processor " + std::to_string(p) + " table " + std::to_string(t));
  EXPECT_GT(r.cycles, 0);
  EXPECT_LE(r.span.route, r.span.ids);
  EXPECT_LE(r.span.ids, r.span.gather);
  EXPECT_LE(r.span.gather, r.span.rows);
  EXPECT_LE(r.span.rows, r.span.combine);
  EXPECT_EQ(r.cycles, r.span.combine);
  if (P > 1) {
    EXPECT_GT(r.id_bytes, 0u);
    EXPECT_GT(r.row_bytes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ShardedLookup,
                         ::testing::Values(Case{1, 1, ShardPlacement::kMod, Combiner::Sum},
                                           Case{4, 1, ShardPlacement::kMod, Combiner::Sum},
                                           Case{4, 1, ShardPlacement::kMod, Combiner::Mean},
                                           Case{4, 1, ShardPlacement::kMod, Combiner::None},
                                           Case{3, 1, ShardPlacement::kMod, Combiner::Sum},
                                           Case{4, 1, ShardPlacement::kTable, Combiner::Sum},
                                           Case{2, 2, ShardPlacement::kMod, Combiner::Mean},
                                           Case{2, 2, ShardPlacement::kTable, Combiner::None}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::to_string(i.param.chips) + "x" +
                                  std::to_string(i.param.cores) + "_" +
                                  shard_placement_name(i.param.placement) + "_" +
                                  std::string(numerics::combiner_name(i.param.combiner));
                         });

TEST(ShardedLookupThreads, ResultsTimesAndTrafficDoNotDependOnTheHostThreads) {
  const SystemSpec sys = small_ring(4, 1);
  const auto bags = edge_bags(4);
  const ShardMap map(ShardPlacement::kMod, 4);
  const ShardedLookupResult one =
      sharded_lookup(small_spec(), sys, map, kTables, bags, Combiner::Sum, value);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    const ShardedLookupResult r =
        sharded_lookup(small_spec(), sys, map, kTables, bags, Combiner::Sum, value, &pool);
    EXPECT_EQ(r.cycles, one.cycles) << threads;
    EXPECT_EQ(r.span.ids, one.span.ids) << threads;
    EXPECT_EQ(r.span.rows, one.span.rows) << threads;
    EXPECT_EQ(r.packets, one.packets) << threads;
    EXPECT_EQ(r.busiest_link_row_bytes, one.busiest_link_row_bytes) << threads;
    for (int p = 0; p < 4; ++p)
      for (int t = 0; t < 3; ++t)
        expect_bits_equal(r.pooled[static_cast<size_t>(p)][static_cast<size_t>(t)],
                          one.pooled[static_cast<size_t>(p)][static_cast<size_t>(t)],
                          "threads " + std::to_string(threads));
  }
}

TEST(ShardedLookupTraffic, EveryIdGoesToItsOwnerAndEveryRowComesBack) {
  // Two chips on a line, one table of 8 rows of 4 words, mod placement: processor 0 looks up
  // ids 1, 3, 3 (owned by 1) and 2 (its own); processor 1 looks up 0 (owned by 0).
  const SystemSpec sys = small_ring(2, 1);
  const std::vector<ShardedTable> tables = {{"t", 8, 4}};
  const std::vector<std::vector<LookupBags>> bags = {{{{0, 4}, {1, 3, 3, 2}}}, {{{0, 1}, {0}}}};
  const ShardedLookupResult r = sharded_lookup(small_spec(), sys, ShardMap(ShardPlacement::kMod, 2),
                                               tables, bags, Combiner::Sum, value);
  EXPECT_EQ(r.id_bytes, 4u * (3 + 1));       // 3 ids to processor 1, 1 to processor 0
  EXPECT_EQ(r.row_bytes, 4u * 4 * (3 + 1));  // their rows back
  EXPECT_EQ(r.busiest_link_id_bytes, 4u * 3);
  EXPECT_EQ(r.busiest_link_row_bytes, 4u * 4 * 3);
  EXPECT_EQ(r.max_hops, 1);
  // HBM rows of 16 B = one 64-B request each: owner 1 reads 3 rows; processor 0 reads back 3.
  EXPECT_EQ(r.owner_row_bytes, 3 * 64);
  EXPECT_EQ(r.remote_row_bytes, 3 * 64);
  // route, on either processor (built-in sparse-core figures: 64-B requests at 428 B per cycle,
  // latency 500, 16 ids per cycle, decode 4): the ids and the 2 offsets are 2 requests (a stream
  // of 500 + ceil(2 x 64 / 428) = 501 cycles), ceil(ids / 16) = 1, the lists 2 requests (501;
  // processor 1's one list: 1 request, also 501).
  EXPECT_EQ(r.span.route, 4 + 501 + 1 + 501);
}

TEST(ShardedLookupErrors, BadBagsAndIdsAreErrorsNamingWhere_bad) {
  using testing::error_of;
  const SystemSpec sys = small_ring(2, 1);
  const ShardMap map(ShardPlacement::kMod, 2);
  const std::vector<ShardedTable> tables = {{"emb", 8, 4}};
  const auto run = [&](const std::vector<std::vector<LookupBags>>& bags) {
    return error_of(
        [&] { sharded_lookup(small_spec(), sys, map, tables, bags, Combiner::Sum, value); });
  };
  const std::string out_of_range = run({{{{0, 2}, {1, 8}}}, {{{0, 0}, {}}}});
  EXPECT_NE(out_of_range.find("processor 0 table 'emb'"), std::string::npos) << out_of_range;
  EXPECT_NE(out_of_range.find("id 8 outside the table (8 rows) at position 1"), std::string::npos)
      << out_of_range;
  EXPECT_NE(run({{{{0, 1}, {1}}}}).find("bags for 1 processors"), std::string::npos);
  EXPECT_NE(run({{{{0, 2}, {1}}}, {{{0, 0}, {}}}}).find("1 ids, offsets end at 2"),
            std::string::npos);
  EXPECT_NE(run({{{{0, 2, 1}, {1, 1}}}, {{{0, 0}, {}}}}).find("offsets[2] = 1 < offsets[1] = 2"),
            std::string::npos);
  EXPECT_NE(run({{}, {}}).find("bags for 0 tables, not 1"), std::string::npos);
  EXPECT_NE(error_of([&] {
              sharded_lookup(small_spec(), sys, ShardMap(ShardPlacement::kMod, 3), tables,
                             {{}, {}, {}}, Combiner::Sum, value);
            }).find("over 3 processors on a system of 2"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::system
