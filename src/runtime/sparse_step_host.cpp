#include "runtime/sparse_step_host.h"

#include <numeric>
#include <vector>

#include "common/error.h"
#include "report/stats.h"

namespace tessera::runtime {

void register_sparse_table(core::Core& c, const compiler::CompiledProgram& p) {
  const compiler::SparseBagShape& shape = p.sparse.plan.shape;
  const compiler::HbmTensor& table = p.params.at(static_cast<size_t>(p.sparse.param));
  const int t = c.machine().sparse().add_table(
      core::SparseTable{table.name, table.hbm, shape.rows, shape.dim}, c.spec().hbm_bytes / 4);
  TESSERA_CHECK(t == shape.table, "the step's table is the sparse core's table 0");
}

int64_t write_unit_offsets(core::Core& c, const compiler::CompiledProgram& p) {
  const compiler::SparseBagPlan& plan = p.sparse.plan;
  TESSERA_CHECK(
      plan.shape.combiner == numerics::Combiner::None && plan.shape.bags == plan.shape.capacity,
      "one-id bags are an embedding's");
  std::vector<uint32_t> offsets(static_cast<size_t>(plan.in.bags + 1));
  std::iota(offsets.begin(), offsets.end(), 0u);
  c.host_state().hbm.write_block(plan.in.offsets, offsets.data(),
                                 static_cast<int64_t>(offsets.size()));
  return 4 * static_cast<int64_t>(offsets.size());
}

int64_t run_sparse_forward(core::Core& c, const compiler::CompiledProgram& p) {
  core::SparseCore& sc = c.machine().sparse();
  for (const core::SparseDescriptor& d : compiler::sparse_forward(p.sparse.plan)) sc.enqueue(d);
  return sc.run(c.host_state(), c.cycles());
}

int64_t run_sparse_backward(core::Core& c, const compiler::CompiledProgram& p) {
  core::SparseCore& sc = c.machine().sparse();
  for (const core::SparseDescriptor& d :
       compiler::sparse_backward(p.sparse.plan, p.sparse.optimizer))
    sc.enqueue(d);
  return sc.run(c.host_state(), 0);
}

nlohmann::ordered_json sparse_core_json(const core::Core& c) {
  report::StatGroup g;
  c.machine().sparse().report(g, c.spec().energy.hbm_byte_pj);
  return g.to_json();
}

}  // namespace tessera::runtime
