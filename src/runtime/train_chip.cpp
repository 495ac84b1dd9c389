#include "runtime/train_chip.h"

#include <cstring>

#include "common/error.h"
#include "numerics/optimizer.h"

namespace tessera::runtime {

ChipTrainer::ChipTrainer(const graph::ModelSpec& model, const core::CoreSpec& spec, const ChipTrainerOptions& options)
    : m_model(model), m_spec(spec), m_options(options) {
  if (options.batch < 1) throw Error("train", "batch must be >= 1");
  if (!(options.host_bytes_per_second > 0)) throw Error("train", "host link bandwidth must be positive");
  const compiler::CompiledProgram& p = program(options.batch, true);
  m_core = std::make_unique<core::Core>(m_spec, p.program);
  const graph::Model m = graph::build_model(model, options.batch);
  m_sample = graph::num_elements(m.graph.value(m.input).shape) / options.batch;
  const std::vector<std::vector<float>> init = graph::init_params(m, options.seed);
  for (size_t i = 0; i < init.size(); ++i) {
    TESSERA_CHECK(static_cast<int64_t>(init[i].size()) == p.params[i].words, "parameter size");
    std::vector<uint32_t> w(init[i].size());
    std::memcpy(w.data(), init[i].data(), 4 * w.size());
    m_core->host_state().hbm.write_block(p.params[i].hbm, w.data(), static_cast<int64_t>(w.size()));
  }
}

const compiler::CompiledProgram& ChipTrainer::program(int n, bool training) {
  auto& slot = m_programs[{n, training}];
  if (!slot) {
    compiler::CompileOptions o;
    o.batch = n;
    o.training = training;
    o.optimizer = m_options.optimizer;
    slot = std::make_unique<compiler::CompiledProgram>(compiler::compile(m_model, m_spec, o));
  }
  return *slot;
}

void ChipTrainer::run(const compiler::CompiledProgram& p, const float* images, const int32_t* labels, int n) {
  core::ArchState& s = m_core->host_state();
  const int64_t words = static_cast<int64_t>(n) * m_sample;
  std::vector<uint32_t> buf(static_cast<size_t>(words));
  std::memcpy(buf.data(), images, 4 * buf.size());
  s.hbm.write_block(p.x.hbm, buf.data(), words);
  std::vector<uint32_t> lab(static_cast<size_t>(n));
  std::memcpy(lab.data(), labels, 4 * lab.size());
  s.hbm.write_block(p.labels.hbm, lab.data(), n);
  const int64_t bytes = 4 * (words + n);
  m_host_bytes += bytes;
  m_host_seconds += static_cast<double>(bytes) / m_options.host_bytes_per_second;
  m_core->load(p.program);
  m_core->run();
}

float ChipTrainer::step(const float* images, const int32_t* labels, int n) {
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
  run(p, images, labels, n);
  return read(p.loss.hbm, 1)[0];
}

void ChipTrainer::evaluate(const float* images, const int32_t* labels, int n, graph::EvalResult& acc) {
  const compiler::CompiledProgram& p = program(n, false);
  run(p, images, labels, n);
  const std::vector<float> logits = read(p.logits.hbm, p.logits.words);
  const int64_t classes = p.logits.words / n;
  for (int b = 0; b < n; ++b) {
    const float* row = logits.data() + b * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;
    acc.correct += best == labels[b] ? 1 : 0;
  }
  acc.loss_sum += static_cast<double>(read(p.loss.hbm, 1)[0]) * n;
  acc.samples += n;
}

std::vector<float> ChipTrainer::read(int64_t addr, int64_t n) const {
  std::vector<uint32_t> w(static_cast<size_t>(n));
  m_core->state().hbm.read_block(addr, w.data(), n);
  std::vector<float> out(w.size());
  std::memcpy(out.data(), w.data(), 4 * w.size());
  return out;
}

std::vector<std::vector<float>> ChipTrainer::params() const {
  const compiler::CompiledProgram& p = *m_programs.at({m_options.batch, true});
  std::vector<std::vector<float>> out;
  for (const compiler::HbmTensor& t : p.params) out.push_back(read(t.hbm, t.words));
  return out;
}

std::vector<std::vector<float>> ChipTrainer::optimizer_state() const {
  const compiler::CompiledProgram& p = *m_programs.at({m_options.batch, true});
  std::vector<std::vector<float>> out;
  for (const compiler::HbmTensor& t : p.state) out.push_back(read(t.hbm, t.words));
  return out;
}

}  // namespace tessera::runtime
