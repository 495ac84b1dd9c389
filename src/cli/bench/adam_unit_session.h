// Host-side driver of one Adam unit and its HBM (no tensor-core program): lays out theta, g and
// the unit programs (compiler/adam_programs.h), runs init once and then steps or solves. Used by
// `tessera adam` and the tests. Its DMA is encoded like the core's
// (core.hbm.exponent_encoding.*, core/hbm_encoding.h).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/adam_programs.h"
#include "core/adam_unit.h"
#include "core/hbm_encoding.h"
#include "core/spec.h"

namespace tessera::bench {

class AdamUnitSession {
 public:
  // Throws tessera::Error for n < 1, bad hyperparameters or an HBM too small for the layout.
  AdamUnitSession(const core::CoreSpec& spec, int64_t n, const core::AdamHyper& hyper);

  // Writes theta (n values) into HBM.
  void set_theta(const std::vector<float>& theta);
  std::vector<float> theta() const;
  // One Adam step with the host's gradient g (n values; theta.size() != g.size() is an error).
  void step(const std::vector<float>& g);
  // The standalone method: runs the solve program; `gradient(theta, t)` returns g_t for the current
  // theta (n values). Returns the iterations run.
  int64_t solve(
      const std::function<std::vector<float>(const std::vector<float>&, int64_t)>& gradient);

  int64_t cycles() const { return m_cycles; }  // simulated cycles of every run so far
  const core::AdamUnit& unit() const { return m_unit; }
  const core::PagedMemory& hbm() const { return m_hbm; }
  // The unit's HBM traffic per tensor kind (counted when core.hbm.exponent_encoding.on).
  const core::HbmEncoder& encoder() const { return m_encoder; }
  const compiler::AdamLayout& layout() const { return m_layout; }

 private:
  void run(const std::vector<uint64_t>& program);
  core::CoreSpec m_spec;
  compiler::AdamLayout m_layout;
  core::PagedMemory m_hbm;
  core::AdamUnit m_unit;
  core::HbmEncoder m_encoder;
  std::vector<uint64_t> m_step;
  int64_t m_cycles = 0;
};

}  // namespace tessera::bench
