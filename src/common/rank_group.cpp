#include "common/rank_group.h"

#include <algorithm>

#include "common/error.h"

namespace tessera {

RankBlock rank_block(int items, int ranks, int rank) {
  TESSERA_CHECK(ranks >= 1 && rank >= 0 && rank < ranks && items >= 0, "bad rank layout");
  const int base = items / ranks, extra = items % ranks;
  return {rank * base + std::min(rank, extra), base + (rank < extra ? 1 : 0)};
}

int rank_of_item(int i, int items, int ranks) {
  const int base = items / ranks, extra = items % ranks;
  const int big = extra * (base + 1);  // items held by the ranks with one more
  if (i < big) return i / (base + 1);
  return extra + (i - big) / base;
}

}  // namespace tessera
