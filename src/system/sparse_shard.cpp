#include "system/sparse_shard.h"

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::system {

const char* shard_placement_name(ShardPlacement p) {
  return p == ShardPlacement::kMod ? "mod" : "table";
}

ShardPlacement shard_placement_from_name(const std::string& name, const std::string& flag) {
  if (name == "mod") return ShardPlacement::kMod;
  if (name == "table") return ShardPlacement::kTable;
  throw UsageError(flag, fmt::format("'{}': mod or table", name));
}

ShardMap::ShardMap(ShardPlacement placement, int processors)
    : m_placement(placement), m_processors(processors) {
  if (processors < 1)
    throw Error("sparse shard", fmt::format("{} processors: at least one", processors));
}

int ShardMap::owner(int table, int64_t row) const {
  return m_placement == ShardPlacement::kMod ? static_cast<int>(row % m_processors)
                                             : table % m_processors;
}

int64_t ShardMap::local_row(int64_t row) const {
  return m_placement == ShardPlacement::kMod ? row / m_processors : row;
}

int64_t ShardMap::local_rows(int table, int64_t rows, int p) const {
  if (m_placement == ShardPlacement::kTable) return table % m_processors == p ? rows : 0;
  return rows > p ? (rows - p + m_processors - 1) / m_processors : 0;
}

}  // namespace tessera::system
