#include "numerics/philox.h"

namespace tessera::numerics {

void philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * c0, p1 = uint64_t{kM1} * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

void philox_stream(uint32_t seed, uint64_t position, uint32_t* out, int64_t n) {
  const uint32_t key[2] = {seed, 0x7e55e7a0u};
  uint32_t block[4];
  int64_t i = 0;
  while (i < n) {
    const uint64_t b = position / 4;
    const uint32_t ctr[4] = {static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0};
    philox4x32_10(ctr, key, block);
    for (uint64_t j = position % 4; j < 4 && i < n; ++j, ++i, ++position) out[i] = block[j];
  }
}

}  // namespace tessera::numerics
