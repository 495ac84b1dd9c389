#include "numerics/bf16.h"

#include <cstring>

namespace tessera::numerics {

void round_to_bf16(float* x, long n) {
  for (long i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i], 4);
    const bool is_nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t lsb = (u >> 16) & 1u;
    const uint32_t rounded = ((u + 0x7fffu + lsb) >> 16) << 16;
    const uint32_t quiet = ((u >> 16) | 0x0040u) << 16;
    u = is_nan ? quiet : rounded;
    std::memcpy(&x[i], &u, 4);
  }
}

}  // namespace tessera::numerics
