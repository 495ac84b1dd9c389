// The vector memory port: loads and stores between vector registers and vector memory, which is
// vmem_rows() rows of `lanes` 32-bit words.
//   vld/vst      sublane s <-> row (base + s), base = sA + imm (sB + imm for stores)
//   vld.s/vst.s  sublane s <-> row (base + s * stride), stride a signed scalar register
//   vld.x/vst.x  element [s][l] <-> word (base * lanes + index[s][l]), index a signed int32 vreg;
//                a scatter writes elements in order s, l, so later lanes win
//   vst.m        vst writing only the elements whose mask bit is set
// Every address is checked before anything is written; an out-of-range row or word faults, as
// does a word a pending xsync exchange holds (exchange.h).
// Timing: every op occupies the port one cycle and never waits for it; a load's vreg is ready at
// start + latency(vector_load). Each op charges S x L x 4 vmem bytes read (loads) or written
// (stores) and S x L vreg_elements per register read and written.
#pragma once

#include <cstdint>
#include <vector>

#include "core/unit.h"

namespace tessera::core {

class VectorMemoryUnit final : public CoreUnit {
 public:
  explicit VectorMemoryUnit(const UnitEnv& env);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override { return now; }
  OpTiming execute(const DecodedOp& op, int64_t now) override;

 private:
  // `row` if it is a row of vector memory that no pending exchange holds; UnitFault otherwise.
  int64_t checked_row(int64_t row, const DecodedOp& op) const;

  std::vector<uint32_t> m_gather;  // one vreg: vld.x gathers here before it writes vD
};

}  // namespace tessera::core
