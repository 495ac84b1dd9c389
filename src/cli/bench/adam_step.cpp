#include "cli/bench/adam_step.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/adam_programs.h"
#include "core/core.h"
#include "isa/assembler.h"
#include "numerics/adam.h"

namespace tessera::bench {

namespace {

using compiler::adam_layout;
using compiler::adam_program_segment;
using compiler::AdamLayout;
using core::AdamHyper;
using core::AdamUnitStats;
using core::ArchState;
using core::Core;
using core::CoreSpec;

using StepCost = AdamStepCost;

isa::DataSegment hbm_floats(int64_t addr, const std::vector<float>& x) {
  isa::DataSegment s;
  s.space = isa::Space::Hbm;
  s.address = static_cast<uint64_t>(addr);
  s.words.resize(x.size());
  std::memcpy(s.words.data(), x.data(), 4 * x.size());
  return s;
}

std::vector<float> read_floats(const ArchState& st, int64_t addr, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  st.hbm.read_block(addr, reinterpret_cast<uint32_t*>(x.data()), n);
  return x;
}

double energy_of(const report::StatGroup& g) {
  return g.to_json()["energy"]["total_uj"].get<double>();
}

// The unit through the tensor core: init (+ one step if `step`), returns the core and its cost.
StepCost unit_run(const CoreSpec& spec, const AdamLayout& l, const std::vector<float>& theta,
                  const std::vector<float>& g, bool step, std::vector<float>* theta_out,
                  std::vector<float>* m_out, std::vector<float>* v_out) {
  const int64_t init_at = l.program, step_at = l.program + 64;
  std::string text = fmt::format("sli s1, {}\nadam.start s1, 1\nwait 1, 1\n", init_at);
  if (step) text += fmt::format("sli s2, {}\nadam.start s2, 1\nwait 1, 1\n", step_at);
  isa::Program p = isa::assemble(text + "halt\n", "<bench adam>");
  const auto hw = core::adam_hyper_words(AdamHyper{});
  p.data.push_back({isa::Space::Hbm, static_cast<uint64_t>(l.hyper),
                    std::vector<uint32_t>(hw.begin(), hw.end())});
  p.data.push_back(adam_program_segment(compiler::adam_unit_init_program(l), init_at));
  p.data.push_back(adam_program_segment(compiler::adam_unit_step_program(l), step_at));
  p.data.push_back(hbm_floats(l.theta, theta));
  p.data.push_back(hbm_floats(l.g, g));
  Core c(spec, p);
  c.run();
  report::StatGroup ug;
  c.machine().adam().report(ug, spec.energy.hbm_byte_pj);
  const AdamUnitStats& st = c.machine().adam().stats();
  if (theta_out) {
    *theta_out = read_floats(c.state(), l.theta, l.n);
    m_out->clear(), v_out->clear();
    for (int64_t i = 0; i < l.n; ++i) {
      m_out->push_back(c.machine().adam().m_at(c.state().hbm, i));
      v_out->push_back(c.machine().adam().v_at(c.state().hbm, i));
    }
  }
  return {c.cycles(), st.hbm_read_bytes() + st.hbm_write_bytes(), energy_of(ug)};
}

StepCost vector_run(const CoreSpec& spec, const AdamLayout& l, const std::vector<float>& theta,
                    const std::vector<float>& g, std::vector<float>& theta_out,
                    std::vector<float>& m_out, std::vector<float>& v_out) {
  isa::Program p = compiler::adam_vector_step_program(spec, l, AdamHyper{}, 1);
  p.data.push_back(hbm_floats(l.theta, theta));
  p.data.push_back(hbm_floats(l.g, g));
  Core c(spec, p);
  c.run();
  theta_out = read_floats(c.state(), l.theta, l.n);
  m_out = read_floats(c.state(), l.m, l.n);
  v_out = read_floats(c.state(), l.v, l.n);
  const report::StatGroup st = c.stats();
  const auto& ev = c.machine().events();
  return {c.cycles(), ev.hbm_read_bytes + ev.hbm_write_bytes, energy_of(st)};
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), 4 * a.size()) == 0;
}

}  // namespace

AdamBenchRow adam_bench_step(const CoreSpec& spec, int64_t n) {
  if (n < 1) throw UsageError("bench adam", fmt::format("--params {} must be >= 1", n));
  const AdamLayout l = adam_layout(n, 0);
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> theta(static_cast<size_t>(n)), g(static_cast<size_t>(n));
  for (float& x : theta) x = d(rng);
  for (float& x : g) x = d(rng);
  std::vector<float> rt = theta, rm(static_cast<size_t>(n), 0.0f), rv = rm;
  numerics::adamw_reference_step(rt.data(), rm.data(), rv.data(), g.data(), static_cast<long>(n),
                                 1e-3, 0.9, 0.999, 1e-8, 0, 1);
  std::vector<float> ut, um, uv, vt, vm, vv;
  AdamBenchRow row;
  row.n = n;
  const StepCost init = unit_run(spec, l, theta, g, false, nullptr, nullptr, nullptr);
  const StepCost both = unit_run(spec, l, theta, g, true, &ut, &um, &uv);
  row.unit = {both.cycles - init.cycles, both.bytes - init.bytes, both.energy_uj - init.energy_uj};
  row.vector_unit = vector_run(spec, l, theta, g, vt, vm, vv);
  row.unit_bit_identical = same(ut, rt) && same(um, rm) && same(uv, rv);
  row.vector_bit_identical = same(vt, rt) && same(vm, rm) && same(vv, rv);
  return row;
}

}  // namespace tessera::bench
