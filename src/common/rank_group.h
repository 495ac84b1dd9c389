// The processes ("ranks") that simulate one system together, as the lower layers see them: the
// collectives they need and how a list of items (processors, chips) is split over the ranks.
//
// All calls are collective: every rank of the group calls them in the same order. system/
// communicator.h implements the group over MPI (or for one process) and adds what the system needs
// on top (broadcast, traffic counts, the process's world).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

using Bytes = std::vector<uint8_t>;

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `mine`, indexed by rank.
  virtual std::vector<Bytes> allgather(const Bytes& mine) = 0;
  // to[r] is delivered to rank r (to.size() == size()); returns from[r], what rank r sent here.
  virtual std::vector<Bytes> alltoall(const std::vector<Bytes>& to) = 0;
};

// The items rank `rank` of `ranks` holds: [first, first + count). Contiguous balanced blocks: the
// first items % ranks ranks get one item more; with more ranks than items the last ranks get none
// (they still take part in every collective).
struct RankBlock {
  int first = 0;
  int count = 0;
  bool contains(int i) const { return i >= first && i < first + count; }
};
RankBlock rank_block(int items, int ranks, int rank);
// The rank whose block holds item i.
int rank_of_item(int i, int items, int ranks);

}  // namespace tessera
