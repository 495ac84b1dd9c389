#include "cli/bench/adam_unit_session.h"

#include <fmt/format.h>

#include "common/error.h"
#include "core/fault.h"

namespace tessera::bench {

using compiler::adam_layout;
using core::PagedMemory;
using core::UnitFault;

AdamUnitSession::AdamUnitSession(const core::CoreSpec& spec, int64_t n,
                                 const core::AdamHyper& hyper)
    : m_spec(spec),
      m_layout(adam_layout(n)),
      m_hbm(spec.hbm_bytes / 4),
      m_unit(m_spec),
      m_encoder(m_spec.hbm_encoding) {
  if (n < 1) throw Error("adam unit", fmt::format("needs at least 1 parameter, got {}", n));
  core::validate_adam_hyper(hyper);
  if (m_layout.v + n > m_hbm.size())
    throw Error("adam unit",
                fmt::format("{} parameters do not fit the {} bytes of HBM", n, spec.hbm_bytes));
  const auto words = core::adam_hyper_words(hyper);
  m_hbm.write_block(m_layout.hyper, words.data(), core::kAdamHyperWords);
  m_step = compiler::adam_unit_step_program(m_layout);
  run(compiler::adam_unit_init_program(m_layout));
}

void AdamUnitSession::run(const std::vector<uint64_t>& program) {
  const isa::DataSegment seg = compiler::adam_program_segment(program, m_layout.program);
  m_hbm.write_block(m_layout.program, seg.words.data(), static_cast<int64_t>(seg.words.size()));
  try {
    m_cycles = m_unit.run(m_hbm, m_layout.program, m_cycles, &m_encoder);
  } catch (const UnitFault& f) {
    throw Error("", f.what());
  }
}

void AdamUnitSession::set_theta(const std::vector<float>& theta) {
  if (static_cast<int64_t>(theta.size()) != m_layout.n)
    throw Error("adam unit", fmt::format("theta has {} elements, the unit was set up for {}",
                                         theta.size(), m_layout.n));
  m_hbm.write_block(m_layout.theta, reinterpret_cast<const uint32_t*>(theta.data()), m_layout.n);
}

std::vector<float> AdamUnitSession::theta() const {
  std::vector<float> t(static_cast<size_t>(m_layout.n));
  m_hbm.read_block(m_layout.theta, reinterpret_cast<uint32_t*>(t.data()), m_layout.n);
  return t;
}

void AdamUnitSession::step(const std::vector<float>& g) {
  if (static_cast<int64_t>(g.size()) != m_layout.n)
    throw Error("adam unit",
                fmt::format("theta has {} elements but g has {}", m_layout.n, g.size()));
  m_hbm.write_block(m_layout.g, reinterpret_cast<const uint32_t*>(g.data()), m_layout.n);
  run(m_step);
}

int64_t AdamUnitSession::solve(
    const std::function<std::vector<float>(const std::vector<float>&, int64_t)>& gradient) {
  m_unit.set_gradient_hook([&](PagedMemory& hbm, int64_t t) {
    const std::vector<float> g = gradient(theta(), t);
    if (static_cast<int64_t>(g.size()) != m_layout.n)
      throw UnitFault(
          fmt::format("adam unit: theta has {} elements but g has {}", m_layout.n, g.size()));
    hbm.write_block(m_layout.g, reinterpret_cast<const uint32_t*>(g.data()), m_layout.n);
  });
  try {
    run(compiler::adam_unit_solve_program(m_layout));
  } catch (...) {
    m_unit.set_gradient_hook(nullptr);
    throw;
  }
  m_unit.set_gradient_hook(nullptr);
  return m_unit.t();
}

}  // namespace tessera::bench
