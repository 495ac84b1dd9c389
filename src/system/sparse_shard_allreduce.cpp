// ShardedTables::all_reduce (system/sparse_shard_tables.h): the dense gradients' sum over the
// processors that hold the sharded tables, through their HBM and the same fabric.
#include <fmt/format.h>

#include "common/error.h"
#include "system/sparse_shard_engine.h"
#include "system/sparse_shard_tables.h"

namespace tessera::system {

using shard::at;
using shard::Proc;
using shard::Segment;

DenseAllReduceResult ShardedTables::all_reduce(std::vector<std::vector<float>>& v, int64_t start) {
  shard::Engine& e = *m_engine;
  const int P = e.processors();
  if (static_cast<int>(v.size()) != P)
    throw Error("sparse shard",
                fmt::format("an all-reduce of {} vectors over {} processors", v.size(), P));
  const auto W = static_cast<int64_t>(v[0].size());
  for (int p = 1; p < P; ++p)
    if (static_cast<int64_t>(v[at(p)].size()) != W)
      throw Error("sparse shard", fmt::format("all-reduce: processor {} has {} words, processor 0 "
                                              "{}",
                                              p, v[at(p)].size(), W));
  const std::vector<int64_t> first =
      shard::firsts(P, [&](int c) { return W / P + (c < W % P ? 1 : 0); });
  const auto chunk = [&](int c) { return first[at(c + 1)] - first[at(c)]; };
  std::vector<int64_t> buf(at(P)), recv(at(P));
  e.begin(false);
  e.each([&](Proc& me, int p) {
    buf[at(p)] = me.alloc(W, p);
    recv[at(p)] = me.alloc(P * chunk(p), p);
    me.st.hbm.write_block(buf[at(p)], reinterpret_cast<const uint32_t*>(v[at(p)].data()), W);
  });
  DenseAllReduceResult r;
  shard::ExchangeBytes x;
  // Reduce-scatter: chunk d of processor s to row s of processor d's received chunks.
  const int64_t scattered = e.all_to_all(start, x, [&](int s, int d, int t) {
    if (t != 0) return Segment{};
    return Segment{buf[at(s)] + first[at(d)], recv[at(d)] + s * chunk(d), chunk(d)};
  });
  e.each([&](Proc& me, int p) {
    const int64_t n = chunk(p);
    std::vector<float> sum(at(n)), part(at(n));
    me.st.hbm.read_block(recv[at(p)], reinterpret_cast<uint32_t*>(sum.data()), n);
    for (int s = 1; s < P; ++s) {
      me.st.hbm.read_block(recv[at(p)] + s * n, reinterpret_cast<uint32_t*>(part.data()), n);
      for (int64_t i = 0; i < n; ++i) sum[at(i)] += part[at(i)];
    }
    me.st.hbm.write_block(buf[at(p)] + first[at(p)], reinterpret_cast<const uint32_t*>(sum.data()),
                          n);
  });
  // All-gather: every processor's summed chunk to the same place on every other.
  r.cycles = e.all_to_all(scattered, x, [&](int s, int d, int t) {
    if (t != 0) return Segment{};
    return Segment{buf[at(s)] + first[at(s)], buf[at(d)] + first[at(s)], chunk(s)};
  });
  e.each([&](Proc& me, int p) {
    me.st.hbm.read_block(buf[at(p)], reinterpret_cast<uint32_t*>(v[at(p)].data()), W);
  });
  r.bytes = x.bytes;
  r.busiest_link_bytes = x.busiest_link;
  r.packets = e.packets();
  e.end();
  return r;
}

}  // namespace tessera::system
