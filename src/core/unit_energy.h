// UnitEnergy: the energy of a unit beside the tensor core (the Adam unit, the sparse core) as N
// named parts, and its statistics.
#pragma once

#include <array>

#include "report/stats.h"

namespace tessera::core {

template <int N>
struct UnitEnergy {
  static constexpr int kParts = N;
  std::array<const char*, N> names{};  // "<part>_pj"
  std::array<double, N> pj{};
  double total = 0;

  // total = the sum of the parts, in order.
  void add_up() {
    total = 0;
    for (double v : pj) total += v;
  }
  // g.energy: total_uj and breakdown.<part>_pj.
  void report(report::StatGroup& g) const {
    report::StatGroup& en = g.group("energy");
    en.set("total_uj", total * 1e-6, "uJ");
    report::StatGroup& br = en.group("breakdown");
    for (int i = 0; i < N; ++i)
      br.set(names[static_cast<size_t>(i)], pj[static_cast<size_t>(i)], "pJ");
  }
};

}  // namespace tessera::core
