// MxuAttribution: the matrix unit's work split by program region. The core calls record(pc, ...)
// after every mmul* it executes (Core::set_mxu_attribution); the op's work is the difference of
// the unit's cumulative MxuStats across it, added to the region that `region_of_pc` gives the
// issuing bundle's pc (pcs outside the map or mapped to -1 go to other()).
// So the regions' sums equal the unit's totals over the attributed runs, counter by counter.
// Per-region accumulator widths (core/term_layer_width.h): before(pc, mxu), called before every
// mmul*, sets the term-serial MXU's width to the pc's region's (or the default width).
#pragma once

#include <cstdint>
#include <vector>

#include "core/mxu.h"

namespace tessera::core {

// Integer counters of MXU pushes, and of the bundles issued in a region (record_bundle); they add
// up (operator+=, operator-).
struct MxuWork {
  int64_t pushes = 0, macs = 0, busy_cycles = 0, tile_imbalance = 0;
  numerics::TermMatmulStats term;
  // Issue cycles of the region's bundles (each bundle's stall cycles plus its issue cycle) and the
  // HBM bytes (read + written, as the HBM data path carries them) of the DMA requests they issued.
  int64_t cycles = 0, hbm_bytes = 0;

  MxuWork& operator+=(const MxuWork& o);
  friend MxuWork operator-(MxuWork a, const MxuWork& b);
  friend bool operator==(const MxuWork&, const MxuWork&) = default;
};

// The counters of `s` that MxuWork holds.
MxuWork work_of(const MxuStats& s);

class MxuAttribution {
 public:
  // Starts a run: pc -> region index >= 0 (-1: other); `now` = the unit's stats before it. With
  // count = false the run's work is not recorded (only widths apply). The map must outlive the run.
  void begin(const std::vector<int32_t>* region_of_pc, const MxuStats& now, bool count = true);
  // Widths per region index (<= 0 or past the end: default_bits); empty: before() does nothing.
  void set_region_widths(std::vector<int32_t> bits, int default_bits);
  // Before an mmul* issued at `pc`.
  void before(int64_t pc, Mxu& mxu) const;
  // After an mmul* issued at `pc`: its work = now - the stats after the previous record/begin.
  void record(int64_t pc, const MxuStats& now);
  // After the bundle at `pc` issued: it took `cycles` (from the previous bundle's issue) and its
  // DMA requests carry `hbm_bytes` on the HBM data path.
  void record_bundle(int64_t pc, int64_t cycles, int64_t hbm_bytes);

  // Per region index, cumulative since construction (regions never recorded: zeros, or absent
  // past the highest index recorded); and the work of unmapped pcs.
  const std::vector<MxuWork>& work() const { return m_work; }
  const MxuWork& other() const { return m_other; }

 private:
  std::vector<MxuWork> m_work;
  MxuWork m_other;
  const std::vector<int32_t>* m_map = nullptr;
  bool m_count = true;
  std::vector<int32_t> m_widths;
  int m_default_bits = 0;
  MxuWork m_last;
  int32_t region(int64_t pc) const;
  MxuWork& slot(int32_t region);
};

}  // namespace tessera::core
