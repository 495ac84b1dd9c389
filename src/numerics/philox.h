// The random stream of the chip's RNG unit, defined once for the simulator and every host
// reference (dropout masks).
//
// Definition: Philox-4x32-10 (Salmon et al., SC'11), counter based. Key = (seed, 0x7e55e7a0);
// stream word j = philox(counter = (j / 4 low, j / 4 high, 0, 0), key)[j % 4].
#pragma once

#include <cstdint>

namespace tessera::numerics {

// The Philox-4x32-10 block function (exposed for tests against published vectors).
void philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

// Words [position, position + n) of the stream of `seed` into out.
void philox_stream(uint32_t seed, uint64_t position, uint32_t* out, int64_t n);

}  // namespace tessera::numerics
