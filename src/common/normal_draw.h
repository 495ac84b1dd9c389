// A standard normal value drawn from the SplitMix64 stream by Box-Muller (model initialisation):
// r = sqrt(-2 ln(1 - u1)), value = r * cos(2 pi u2), with u1 then u2 the stream's next two
// unit53() draws. Two draws per value; the second Box-Muller value is not kept.
#pragma once

#include <cmath>
#include <numbers>

#include "common/splitmix64.h"

namespace tessera {

inline double standard_normal(SplitMix64& rng) {
  const double r = std::sqrt(-2.0 * std::log(1.0 - rng.unit53()));
  return r * std::cos(2.0 * std::numbers::pi * rng.unit53());
}

}  // namespace tessera
