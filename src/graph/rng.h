// The deterministic generator of graph initialisation and dataset shuffling.
//
// SplitMix64 (Steele, Lea, Flood 2014): state += 0x9e3779b97f4a7c15; z = state;
// z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9; z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
// return z ^ (z >> 31). The whole state is one uint64_t (saved by checkpoints as is).
//   unit():      (next() >> 40) * 2^-24, a double in [0, 1) with 24 random bits;
//   below(n):    unbiased integer in [0, n) by rejection: draw r = next() until
//                r >= (2^64 - n) % n, return r % n.
#pragma once

#include <cstdint>

namespace tessera::graph {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : m_state(seed) {}

  uint64_t next() {
    uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 40) * 0x1.0p-24; }
  uint64_t below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    for (;;) {
      const uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }
  uint64_t state() const { return m_state; }

 private:
  uint64_t m_state;
};

}  // namespace tessera::graph
