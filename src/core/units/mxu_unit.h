// The matrix units as one core unit: core.mxu.count MXUs, each a core::Mxu with its own weight
// staging, accumulators, result FIFO and counters (core/mxu.h defines their function and timing).
// mlw, mflip, mmul*, mpop go to the MXU their index operand names (field c), with operands as fp32.
// The unit reports the `mxu` statistics group (the totals, and with several MXUs each one's
// counters as `mxu.mxuN`) and declares the core.mxu.* config section (including the term-serial
// PE, term_mxu_spec.h).
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

  int count() const { return static_cast<int>(m_mxus.size()); }
  Mxu& mxu(int i) { return m_mxus[static_cast<size_t>(i)]; }
  const Mxu& mxu(int i) const { return m_mxus[static_cast<size_t>(i)]; }
  // The counters of all MXUs added up (MxuStats::operator+=).
  MxuStats total_stats() const;

 private:
  std::vector<Mxu> m_mxus;
  std::vector<float> m_buf;  // one popped result vreg
};

}  // namespace tessera::core
