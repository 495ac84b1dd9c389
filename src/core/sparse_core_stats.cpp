// The sparse core's statistics as a report::StatGroup, and its energy model.
#include "core/sparse_core.h"

namespace tessera::core {

SparseCoreEnergy sparse_core_energy(const SparseCoreSpec& p, const SparseCoreStats& s,
                                    double hbm_byte_pj) {
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  SparseCoreEnergy e;
  e.names = {"id_pj", "element_pj", "vmem_pj", "descriptor_pj", "hbm_pj"};
  e.pj = {p.id_pj * d(s.ids), p.element_op_pj * d(s.element_ops), p.vmem_byte_pj * d(s.vmem_bytes),
          p.descriptor_pj * d(s.descriptors),
          hbm_byte_pj * d(s.hbm_read_bytes + s.hbm_write_bytes)};
  e.add_up();
  return e;
}

void SparseCore::report(report::StatGroup& g, double hbm_byte_pj) const {
  const SparseCoreStats& s = m_stats;
#define X(field, what) g.set_int(#field, s.field, "", what);
#include "core/sparse_counters.def"
#undef X
  g.set_int("tables", static_cast<int64_t>(m_tables.size()), "tables");
  sparse_core_energy(m_spec, s, hbm_byte_pj).report(g);
}

}  // namespace tessera::core
