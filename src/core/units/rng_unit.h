// The random number generator: `rng vD` fills vD with the next S x L words of the generator
// stream (ArchState::rng, architectural state); `rng.seed sA` reseeds it from sA.
// Timing: `rng` occupies the generator ceil(S*L / core.rng.words_per_cycle) cycles and vD is ready
// at start + occupancy - 1 + latency(rng); `rng.seed` occupies it one cycle. Waiting for the
// generator: StallCause::RngBusy. Config: core.rng.words_per_cycle.
#pragma once

#include <cstdint>

#include "core/unit.h"

namespace tessera::core {

class RngUnit final : public CoreUnit {
 public:
  explicit RngUnit(const UnitEnv& env);
  static void read_spec(ConfigReader& reader, CoreSpec& spec);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override;
  OpTiming execute(const DecodedOp& op, int64_t now) override;

 private:
  int64_t m_free = 0;  // first cycle the generator takes a new op
  int m_cycles;        // generator cycles per vreg
};

}  // namespace tessera::core
