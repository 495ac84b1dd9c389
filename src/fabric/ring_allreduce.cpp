#include "fabric/ring_allreduce.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::fabric {

std::vector<int> ring_order(const FabricSpec& s) {
  std::vector<int> order;
  if (s.topology != Topology::kTorus2d) {
    for (int c = 0; c < s.chips; ++c) order.push_back(c);
    return order;
  }
  const bool by_rows = s.dims_y % 2 == 0 || s.dims_x % 2 != 0;
  const int outer = by_rows ? s.dims_y : s.dims_x, inner = by_rows ? s.dims_x : s.dims_y;
  for (int o = 0; o < outer; ++o)
    for (int k = 0; k < inner; ++k) {
      const int i = o % 2 == 0 ? k : inner - 1 - k;
      order.push_back(by_rows ? o * s.dims_x + i : i * s.dims_x + o);
    }
  return order;
}

RingAllreduceResult run_ring_allreduce(Fabric& fabric, uint64_t bytes, int directions) {
  const FabricSpec& s = fabric.spec();
  if (bytes % 4 != 0 || bytes == 0)
    throw Error("ring all-reduce",
                fmt::format("{} bytes is not a positive number of words", bytes));
  if (directions != 1 && directions != 2)
    throw Error("ring all-reduce", "directions must be 1 or 2");
  const int n = s.chips;
  const std::vector<int> order = ring_order(s);
  RingAllreduceResult r;
  r.steps = 2 * (n - 1);
  const uint64_t words = bytes / 4;
  // per direction d: words_d split into n fragments
  std::vector<uint64_t> dir_words(directions);
  for (int d = 0; d < directions; ++d)
    dir_words[d] = words / directions + (static_cast<uint64_t>(d) < words % directions ? 1 : 0);
  const auto fragment = [&](int d, int f) {
    return dir_words[d] / n + (static_cast<uint64_t>(f) < dir_words[d] % n ? 1 : 0);
  };
  // ready[d][i]: when ring position i may send its next fragment in direction d
  std::vector<std::vector<Picos>> ready(directions, std::vector<Picos>(n, 0));
  Picos end = 0;
  for (int step = 0; step < r.steps; ++step) {
    for (int d = 0; d < directions; ++d)
      for (int i = 0; i < n; ++i) {
        const int j = d == 0 ? (i + 1) % n : (i + n - 1) % n;
        Transfer t;
        t.src = {order[i], 0};
        t.dst = {order[j], 0};
        t.combine = step < n - 1 ? Combine::kAdd : Combine::kStore;
        t.phantom_words = fragment(d, ((d == 0 ? i - step : i + step) % n + n) % n);
        t.id = static_cast<uint64_t>(d) * n + i;
        fabric.post(ready[d][i], std::move(t));
      }
    for (const Arrival& a : fabric.drain()) {
      const int d = static_cast<int>(a.transfer.id / n), i = static_cast<int>(a.transfer.id % n);
      const int j = d == 0 ? (i + 1) % n : (i + n - 1) % n;
      ready[d][j] = a.time;
      end = std::max(end, a.time);
    }
  }
  r.sim_ps = end;
  const double bound_s =
      2.0 * (n - 1) / n * static_cast<double>(bytes) / (s.link_gbytes_per_s * 1e9 * directions);
  r.bound_ps = static_cast<Picos>(bound_s * 1e12) + r.steps * ns_to_ps(s.link_latency_ns);
  r.efficiency =
      r.sim_ps > 0 ? static_cast<double>(r.bound_ps) / static_cast<double>(r.sim_ps) : 1.0;
  return r;
}

}  // namespace tessera::fabric
