// Where the rows of embedding tables live when the tables are spread over the processors of a
// system (docs/sparse-core.md, "Tables across chips"): which processor owns a row, at which row of
// that processor's local table it sits, and how many rows each processor holds.
//   mod    row r of every table lives on processor r mod P, at local row r div P (a table of R
//          rows gives processor p ceil((R - p) / P) rows: none when R <= p);
//   table  table t lives whole on processor t mod P, at the same row numbers.
// P is the number of processors (chips x cores per chip): every processor has a sparse core
// beside its tensor core and its own share of HBM.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace tessera::system {

struct ShardedTable {
  std::string name;
  int64_t rows = 0, dim = 0;
};

// value(table, row, col): the fp32 value of a table's element.
using TableValue = std::function<float(int table, int64_t row, int64_t col)>;

enum class ShardPlacement : uint8_t { kMod, kTable };

const char* shard_placement_name(ShardPlacement p);
// "mod" or "table"; anything else throws UsageError naming `flag`.
ShardPlacement shard_placement_from_name(const std::string& name, const std::string& flag);

class ShardMap {
 public:
  // Throws tessera::Error for fewer than one processor.
  ShardMap(ShardPlacement placement, int processors);

  ShardPlacement placement() const { return m_placement; }
  int processors() const { return m_processors; }
  int owner(int table, int64_t row) const;
  int64_t local_row(int64_t row) const;
  // The rows of a `rows`-row table that processor p holds.
  int64_t local_rows(int table, int64_t rows, int p) const;

 private:
  ShardPlacement m_placement;
  int m_processors;
};

}  // namespace tessera::system
