#include "core/mxu_attribution.h"

#include <utility>

namespace tessera::core {

MxuWork& MxuWork::operator+=(const MxuWork& o) {
  pushes += o.pushes;
  macs += o.macs;
  busy_cycles += o.busy_cycles;
  tile_imbalance += o.tile_imbalance;
  term += o.term;
  cycles += o.cycles;
  hbm_bytes += o.hbm_bytes;
  return *this;
}

MxuWork operator-(MxuWork a, const MxuWork& b) {
  a.pushes -= b.pushes;
  a.macs -= b.macs;
  a.busy_cycles -= b.busy_cycles;
  a.tile_imbalance -= b.tile_imbalance;
  numerics::TermMatmulStats& t = a.term;
  const numerics::TermMatmulStats& u = b.term;
  t.macs -= u.macs;
  t.pe_steps -= u.pe_steps;
  t.tile_steps -= u.tile_steps;
  t.cycles -= u.cycles;
  t.terms_processed -= u.terms_processed;
  t.terms_skipped_zero -= u.terms_skipped_zero;
  t.terms_skipped_oob -= u.terms_skipped_oob;
  t.pe_stall_cycles -= u.pe_stall_cycles;
  t.lane_idle_cycles -= u.lane_idle_cycles;
  a.cycles -= b.cycles;
  a.hbm_bytes -= b.hbm_bytes;
  return a;
}

MxuWork work_of(const MxuStats& s) {
  MxuWork w;
  w.pushes = s.pushes;
  w.macs = s.macs;
  w.busy_cycles = s.busy_cycles;
  w.tile_imbalance = s.term_tile_imbalance;
  w.term = s.term;
  return w;
}

void MxuAttribution::begin(const std::vector<int32_t>* region_of_pc, const MxuStats& now,
                           bool count) {
  m_map = region_of_pc;
  m_count = count;
  m_last = work_of(now);
}

void MxuAttribution::set_region_widths(std::vector<int32_t> bits, int default_bits) {
  m_widths = std::move(bits);
  m_default_bits = default_bits;
}

int32_t MxuAttribution::region(int64_t pc) const {
  return m_map != nullptr && pc >= 0 && pc < static_cast<int64_t>(m_map->size())
             ? (*m_map)[static_cast<size_t>(pc)]
             : -1;
}

void MxuAttribution::before(int64_t pc, Mxu& mxu) const {
  if (m_widths.empty()) return;
  const int32_t r = region(pc);
  const int bits =
      r >= 0 && static_cast<size_t>(r) < m_widths.size() && m_widths[static_cast<size_t>(r)] > 0
          ? m_widths[static_cast<size_t>(r)]
          : m_default_bits;
  if (bits != mxu.term_acc_width()) mxu.set_term_acc_width(bits);
}

MxuWork& MxuAttribution::slot(int32_t r) {
  if (r < 0) return m_other;
  if (static_cast<size_t>(r) >= m_work.size()) m_work.resize(static_cast<size_t>(r) + 1);
  return m_work[static_cast<size_t>(r)];
}

void MxuAttribution::record(int64_t pc, const MxuStats& now) {
  if (!m_count) return;
  const MxuWork w = work_of(now);
  slot(region(pc)) += w - m_last;
  m_last = w;
}

void MxuAttribution::record_bundle(int64_t pc, int64_t cycles, int64_t hbm_bytes) {
  if (!m_count) return;
  MxuWork& w = slot(region(pc));
  w.cycles += cycles;
  w.hbm_bytes += hbm_bytes;
}

}  // namespace tessera::core
