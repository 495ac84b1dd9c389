// The reduce/permute unit (RPU): cross-lane work. Each op computes a result vreg into the unit's
// FIFO; rpop pops the oldest into vD. Timing: FifoUnit with latency class `reduce`. Config:
// core.rpu.fifo.
//
// Semantics (S sublanes, L lanes, rows reduced with numerics/reduce.h's tree):
//   rrot vA, sB      r[s][l] = vA[s][(l - sB) mod L]
//   rperm vA, vB     r[s][l] = vA[s][vB[s][l] mod L]
//   rsum / rmax vA   r[s][l] = tree_sum / tree_max of row s
//   rsegsum vA, imm  r[s][l] = tree_sum of row s over the segment of imm lanes holding l
//                    (imm a power of two in 1..L, else the op faults)
//   rsum.perm vA,vB  with t[s] = tree_sum of row s: r[s][l] = t[vB[s][l] mod S] (the chained
//                    permute routes the per-sublane sums anywhere, e.g. into one row)
#pragma once

#include <cstdint>
#include <vector>

#include "core/units/fifo_unit.h"

namespace tessera::core {

class ReducePermuteUnit final : public FifoUnit {
 public:
  explicit ReducePermuteUnit(const UnitEnv& env);
  static void read_spec(ConfigReader& reader, CoreSpec& spec);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override;
  OpTiming execute(const DecodedOp& op, int64_t now) override;

 private:
  void compute(const DecodedOp& op, uint32_t* out);

  std::vector<float> m_in;      // vA as fp32
  std::vector<uint32_t> m_out;  // the result vreg
};

}  // namespace tessera::core
