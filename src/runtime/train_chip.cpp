#include "runtime/train_chip.h"

#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "numerics/optimizer.h"
#include "runtime/replica_state.h"
#include "runtime/sparse_step_host.h"

namespace tessera::runtime {

ChipTrainer::ChipTrainer(const TrainModel& model, const core::CoreSpec& spec,
                         const ChipTrainerOptions& options)
    : m_model(model), m_spec(spec), m_options(options) {
  if (options.batch < 1) throw Error("train", "batch must be >= 1");
  if (!(options.host_bytes_per_second > 0))
    throw Error("train", "host link bandwidth must be positive");
  const compiler::CompiledProgram& p = program(options.batch, true);
  core::TimedOptions timed;
  timed.trace = options.trace;
  m_core = std::make_unique<core::Core>(m_spec, p.program, timed);
  const graph::Model m = build_train_model(model, options.batch);
  m_sample = graph::num_elements(m.graph.value(m.input).shape) / options.batch;
  m_labels = graph::num_elements(m.graph.value(m.labels).shape) / options.batch;
  start_replica(*m_core, p, init_train_params(model, m, options.seed));
  set_model_state(model.initial_state);
  if (p.sparse.used) register_sparse_table(*m_core, p);
}

const StepParts& ChipTrainer::parts(int n) {
  auto it = m_parts.find(n);
  if (it == m_parts.end()) it = m_parts.emplace(n, split_step(program(n, true))).first;
  return it->second;
}

const compiler::CompiledProgram& ChipTrainer::program(int n, bool training) {
  auto& slot = m_programs[{n, training}];
  if (!slot) {
    compiler::CompileOptions o;
    o.batch = n;
    o.training = training;
    o.optimizer = m_options.optimizer;
    o.adam_on = m_options.adam_on;
    o.embedding_on = m_options.embedding_on;
    slot = std::make_unique<compiler::CompiledProgram>(compile_train_model(m_model, m_spec, o));
  }
  return *slot;
}

std::shared_ptr<const core::DecodedProgram> ChipTrainer::decoded(const isa::Program& program) {
  auto& slot = m_decoded[&program];
  if (!slot)
    slot = std::make_shared<const core::DecodedProgram>(core::decode_program(program.code, m_spec));
  return slot;
}

void ChipTrainer::load(const isa::Program& program) {
  m_core->load(program, decoded(program));
}

void ChipTrainer::send_batch(const compiler::CompiledProgram& p, const void* x,
                             const int32_t* labels, int n) {
  const int64_t bytes = write_batch(*m_core, p, x, labels, n, m_sample, m_labels) +
                        (p.sparse.used ? write_unit_offsets(*m_core, p) : 0);
  m_host_bytes += bytes;
  m_host_seconds += static_cast<double>(bytes) / m_options.host_bytes_per_second;
}

float ChipTrainer::step(const float* images, const int32_t* labels, int n) {
  return train(images, labels, n);
}

float ChipTrainer::step(const int32_t* ids, const int32_t* labels, int n) {
  return train(ids, labels, n);
}

void ChipTrainer::evaluate(const float* images, const int32_t* labels, int n,
                           graph::EvalResult& acc) {
  infer(images, labels, n, acc);
}

void ChipTrainer::evaluate(const int32_t* ids, const int32_t* labels, int n,
                           graph::EvalResult& acc) {
  infer(ids, labels, n, acc);
}

float ChipTrainer::train(const void* x, const int32_t* labels, int n) {
  const compiler::CompiledProgram& p = program(n, true);
  ++m_steps;
  if (m_options.optimizer.kind == graph::OptimizerKind::kAdam) {
    const graph::OptimizerConfig& o = m_options.optimizer;
    const auto sc = numerics::adam_step_scalars(o.lr, o.beta1, o.beta2, m_steps);
    uint32_t w[2];
    std::memcpy(&w[0], &sc.step, 4);
    std::memcpy(&w[1], &sc.sqrt_bc2, 4);
    m_core->host_state().hbm.write_block(p.scalars.hbm, w, 2);
  }
  const StepParts& sp = parts(n);
  send_batch(p, x, labels, n);
  if (p.sparse.used) run_sparse_forward(*m_core, p);
  load(sp.main);
  m_pe.attach(*m_core, p);  // sp.main's pcs are p's
  core::HbmEncoder& enc = m_core->machine().hbm_encoder();
  enc.set_roles(&p.hbm_roles, 0);
  m_core->run();
  m_pe.detach(*m_core);
  if (p.sparse.used) run_sparse_backward(*m_core, p);
  const OptimizerCounters before = optimizer_counters(*m_core);
  load(sp.update);
  enc.set_roles(&p.hbm_roles,
                p.optimizer_first_bundle);  // sp.update's pc 0 is p's optimizer_first_bundle
  m_core->run();
  enc.set_roles(nullptr, 0);
  m_last_opt = optimizer_cost_between(*m_core, before, optimizer_counters(*m_core));
  m_opt += m_last_opt;
  return read(p.loss.hbm, 1)[0];
}

void ChipTrainer::infer(const void* x, const int32_t* labels, int n, graph::EvalResult& acc) {
  const compiler::CompiledProgram& p = program(n, false);
  send_batch(p, x, labels, n);
  if (p.sparse.used) run_sparse_forward(*m_core, p);
  add_score(run_inference(*m_core, m_pe, p, decoded(p.program), labels, n, m_labels), acc);
}

std::vector<float> ChipTrainer::read(int64_t addr, int64_t n) const {
  return read_hbm_floats(*m_core, addr, n);
}

std::vector<std::vector<float>> ChipTrainer::params() const {
  return read_params(*m_core, *m_programs.at({m_options.batch, true}));
}

std::vector<std::vector<float>> ChipTrainer::optimizer_state() const {
  return read_optimizer_state(*m_core, *m_programs.at({m_options.batch, true}));
}

std::vector<std::vector<float>> ChipTrainer::model_state() const {
  return read_model_state(*m_core, *m_programs.at({m_options.batch, true}));
}

void ChipTrainer::set_model_state(const std::vector<std::vector<float>>& values) {
  write_model_state(*m_core, layout(), values);
}

void ChipTrainer::set_params(const std::vector<std::vector<float>>& values) {
  write_params(*m_core, layout(), values);
}

void ChipTrainer::set_optimizer_state(const std::vector<std::vector<float>>& values) {
  write_optimizer_state(*m_core, layout(), values);
}

void ChipTrainer::set_steps(int64_t steps) {
  if (steps < 0) throw Error("train", "step counter must be >= 0");
  m_steps = steps;
  if (layout().adam_unit.used) m_core->machine().adam().set_t(steps);
}

}  // namespace tessera::runtime
