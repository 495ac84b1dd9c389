#include "runtime/dlrm_chip_dense.h"

#include "core/energy.h"
#include "runtime/replica_state.h"

namespace tessera::runtime {

DlrmChipDense::DlrmChipDense(const graph::DlrmSpec& model, const core::CoreSpec& spec,
                             int processors)
    : m_model(model), m_spec(spec), m_cores(static_cast<size_t>(processors)) {}

DlrmChipDense::~DlrmChipDense() = default;

void DlrmChipDense::prepare(int n) {
  std::unique_ptr<Program>& slot = m_programs[n];
  if (!slot) {
    compiler::CompileOptions o;
    o.batch = n;
    o.training = true;
    o.persistent_grads = true;
    o.optimizer.kind = graph::OptimizerKind::kAdagrad;
    compiler::CompiledProgram c = compiler::compile(graph::build_dlrm(m_model, n).model, m_spec, o);
    StepParts parts = split_step(c);
    auto decoded =
        std::make_shared<const core::DecodedProgram>(core::decode_program(parts.main.code, m_spec));
    slot = std::make_unique<Program>(Program{std::move(c), std::move(parts), std::move(decoded)});
  }
}

DlrmChipDenseRun DlrmChipDense::step(int p, const DlrmParams& params, const DlrmBatch& b,
                                     const DlrmPooled& pooled, int global) {
  const Program& prog = *m_programs.at(b.n);
  const compiler::CompiledProgram& c = prog.compiled;
  std::unique_ptr<core::Core>& core = m_cores[static_cast<size_t>(p)];
  if (!core) core = std::make_unique<core::Core>(m_spec, prog.parts.main, prog.decoded, 0);
  Tensors values = params;
  values.push_back(dlrm_bags(pooled));
  write_params(*core, c, values);
  std::vector<uint32_t> labels(b.labels.size());
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<uint32_t>(b.labels[i]);
  write_hbm_words(*core, c.x.hbm, b.dense);
  write_hbm_words(*core, c.labels.hbm, labels);
  core->load(prog.parts.main, prog.decoded);
  const int64_t start = core->cycles();
  core->run();
  DlrmChipDenseRun r;
  r.cycles = core->cycles() - start;
  r.loss = read_hbm_floats(*core, c.loss.hbm, 1)[0];
  const auto share = static_cast<float>(static_cast<double>(b.n) / global);
  for (size_t i = 0; i < c.params.size(); ++i) {
    std::vector<float> g =
        read_hbm_floats(*core, c.grads.hbm + c.params[i].hbm - c.params[0].hbm, c.params[i].words);
    if (share != 1.0f)
      for (float& v : g) v *= share;
    if (i < params.size())
      r.grads.dense.push_back(std::move(g));
    else
      r.grads.bags = dlrm_split_bags(g, m_model.tables);
  }
  return r;
}

double DlrmChipDense::energy_pj() const {
  double pj = 0;
  for (const std::unique_ptr<core::Core>& c : m_cores)
    if (c)
      pj += core::energy_total_pj(
          core::energy_parts(m_spec, c->machine().events(),
                             core::MxuEnergyCounts::of(c->machine().mxu_stats()), c->cycles()));
  return pj;
}

}  // namespace tessera::runtime
