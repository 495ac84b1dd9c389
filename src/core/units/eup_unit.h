// The extended unary pipeline (EUP): eexp, elog, ercp, ersqrt, esqrt, etanh push f(vA) (fp32,
// numerics/eup.h) into its result FIFO; epop pops the oldest result into vD. Timing: FifoUnit
// with latency class `eup`. Config: core.eup.fifo.
#pragma once

#include <vector>

#include "core/units/fifo_unit.h"

namespace tessera::core {

class EupUnit final : public FifoUnit {
 public:
  explicit EupUnit(const UnitEnv& env);
  static void read_spec(ConfigReader& reader, CoreSpec& spec);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override;
  OpTiming execute(const DecodedOp& op, int64_t now) override;

 private:
  std::vector<float> m_buf;  // one vreg as fp32
};

}  // namespace tessera::core
