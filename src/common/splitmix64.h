// SplitMix64 (Steele, Lea, Flood 2014): the one deterministic random stream of tessera (model
// initialisation, dataset shuffling, the fabric's packet loss, the mapper, random bundles).
//
// next(): state += 0x9e3779b97f4a7c15; z = state; z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
//         z = (z ^ (z >> 27)) * 0x94d049bb133111eb; return z ^ (z >> 31).
// The whole state is one uint64_t (checkpoints save state() and restore with SplitMix64(state)).
// Values derived from the stream are computed here, not by the standard library's distributions,
// so they are bit-identical on every platform:
//   unit():     (next() >> 40) * 2^-24, a double in [0, 1) with 24 random bits;
//   unit53():   (next() >> 11) * 2^-53, a double in [0, 1) with 53 random bits;
//   below(n):   an unbiased integer in [0, n) by rejection: draw r = next() until
//               r >= (2^64 - n) % n, return r % n.
#pragma once

#include <cstdint>

namespace tessera {

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
  double unit53() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
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

}  // namespace tessera
