// The matrix unit as a core unit: mlw, mflip, mmul*, mpop go to core::Mxu (core/mxu.h defines
// their function and timing), with operands as fp32. The unit reports the `mxu` statistics group
// and declares the core.mxu.* config section (including the term-serial PE, term_mxu_spec.h).
#pragma once

#include <cstdint>
#include <vector>

#include "core/mxu.h"
#include "core/unit.h"

namespace tessera::core {

class MxuUnit final : public CoreUnit {
 public:
  explicit MxuUnit(const UnitEnv& env);
  static void read_spec(ConfigReader& reader, CoreSpec& spec);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override;
  OpTiming execute(const DecodedOp& op, int64_t now) override;
  void report(report::StatGroup& g, int64_t cycles) const override;

  Mxu& mxu() { return m_mxu; }
  const Mxu& mxu() const { return m_mxu; }

 private:
  Mxu m_mxu;
  std::vector<float> m_buf;  // one popped result vreg
};

}  // namespace tessera::core
