// Static routing tables computed from the topology and loaded into each chip's router.
//
// Links: every pair of neighbouring chips (fabric_spec.h) joined by one physical link with two
// directed channels. Channel order (= LinkStats order): for each chip in index order, its channels
// to neighbours in ascending neighbour index.
// Tables: next_channel(chip, dst) = the channel a packet at `chip` bound for `dst` leaves by.
//   torus2d: dimension order (x first, then y), each dimension the shorter way round, ties
//            (distance exactly half the ring) in the + direction;
//   ring:    the shorter way round, ties forward (+1);
//   line:    the only way.
// When failed links break such a path, that pair uses a shortest path (BFS, the neighbour with the
// lowest index among equals). A pair with no path at all is a configuration error naming both
// chips.
#pragma once

#include <cstdint>
#include <vector>

#include "fabric/fabric_spec.h"

namespace tessera::fabric {

struct Channel {
  int from = 0;
  int to = 0;
  int wire = 0;  // the physical wire it transmits on (half duplex: shared by both directions)
};

class Routing {
 public:
  explicit Routing(const FabricSpec& spec);

  int chips() const { return m_chips; }
  const std::vector<Channel>& channels() const { return m_channels; }
  int wires() const { return m_wires; }
  // -1 when chip == dst.
  int next_channel(int chip, int dst) const {
    return m_next[static_cast<size_t>(chip) * m_chips + dst];
  }
  // The channel from `a` to neighbour `b`, or -1.
  int channel_between(int a, int b) const;
  // Chips visited from src to dst, both included; hops = size - 1.
  std::vector<int> path(int src, int dst) const;
  int hops(int src, int dst) const { return static_cast<int>(path(src, dst).size()) - 1; }

 private:
  int preferred_next_chip(const FabricSpec& spec, int chip, int dst) const;
  void fill_with_bfs(int dst, std::vector<int>& dist) const;

  int m_chips = 1;
  int m_wires = 0;
  std::vector<Channel> m_channels;
  std::vector<std::vector<int>> m_out;  // per chip: its outgoing channel ids
  std::vector<int> m_next;              // chips x chips
};

}  // namespace tessera::fabric
