#include "runtime/replica_state.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/adam_programs.h"
#include "isa/assembler.h"

namespace tessera::runtime {

std::vector<float> read_hbm_floats(const core::Core& c, int64_t addr, int64_t n) {
  std::vector<uint32_t> w(static_cast<size_t>(n));
  c.state().hbm.read_block(addr, w.data(), n);
  std::vector<float> out(w.size());
  if (!w.empty()) std::memcpy(out.data(), w.data(), 4 * w.size());
  return out;
}

void write_hbm_words(core::Core& c, int64_t addr, const void* src, int64_t words) {
  std::vector<uint32_t> w(static_cast<size_t>(words));
  if (words > 0) std::memcpy(w.data(), src, 4 * w.size());
  c.host_state().hbm.write_block(addr, w.data(), words);
}

Tensors read_params(const core::Core& c, const compiler::CompiledProgram& p) {
  Tensors out;
  for (const compiler::HbmTensor& t : p.params) out.push_back(read_hbm_floats(c, t.hbm, t.words));
  return out;
}

Tensors read_optimizer_state(const core::Core& c, const compiler::CompiledProgram& p) {
  Tensors out;
  if (p.adam_unit.used) {  // m, v from the unit's data cache (or its spill area)
    const core::AdamUnit& unit = c.machine().adam();
    const size_t np = p.params.size();
    for (size_t i = 0; i < p.state.size(); ++i) {
      const int64_t base = p.params[i % np].hbm - p.adam_unit.theta;
      std::vector<float> x(static_cast<size_t>(p.state[i].words));
      for (int64_t j = 0; j < p.state[i].words; ++j)
        x[static_cast<size_t>(j)] =
            i < np ? unit.m_at(c.state().hbm, base + j) : unit.v_at(c.state().hbm, base + j);
      out.push_back(std::move(x));
    }
    return out;
  }
  for (const compiler::HbmTensor& t : p.state) out.push_back(read_hbm_floats(c, t.hbm, t.words));
  return out;
}

Tensors read_model_state(const core::Core& c, const compiler::CompiledProgram& p) {
  Tensors out;
  for (const compiler::HbmTensor& t : p.model_state)
    out.push_back(read_hbm_floats(c, t.hbm, t.words));
  return out;
}

void write_tensors(core::Core& c, const std::vector<compiler::HbmTensor>& where,
                   const Tensors& values, const char* what) {
  if (values.size() != where.size())
    throw Error("train", fmt::format("{}: {} tensors given, the compiled step has {}", what,
                                     values.size(), where.size()));
  for (size_t i = 0; i < where.size(); ++i) {
    if (static_cast<int64_t>(values[i].size()) != where[i].words)
      throw Error("train", fmt::format("{} '{}': {} words given, the compiled step has {}", what,
                                       where[i].name, values[i].size(), where[i].words));
    std::vector<uint32_t> w(values[i].size());
    if (!w.empty()) std::memcpy(w.data(), values[i].data(), 4 * w.size());
    c.host_state().hbm.write_block(where[i].hbm, w.data(), where[i].words);
  }
}

void write_params(core::Core& c, const compiler::CompiledProgram& p, const Tensors& values) {
  write_tensors(c, p.params, values, "parameter");
}

void write_optimizer_state(core::Core& c, const compiler::CompiledProgram& p,
                           const Tensors& values) {
  if (!p.adam_unit.used) {
    write_tensors(c, p.state, values, "optimizer state");
    return;
  }
  // m (one tensor per parameter) then v, as read_optimizer_state returns them, into the unit.
  const size_t np = p.params.size();
  if (values.size() != 2 * np || p.state.size() != 2 * np)
    throw Error("train", fmt::format("optimizer state: {} tensors given, the compiled step has {}",
                                     values.size(), p.state.size()));
  core::AdamUnit& unit = c.machine().adam();
  for (size_t i = 0; i < np; ++i) {
    const int64_t words = p.params[i].words;
    if (static_cast<int64_t>(values[i].size()) != words ||
        static_cast<int64_t>(values[np + i].size()) != words)
      throw Error(
          "train",
          fmt::format("optimizer state of '{}': sizes differ from the compiled step's {} words",
                      p.params[i].name, words));
    const int64_t base = p.params[i].hbm - p.adam_unit.theta;
    for (int64_t j = 0; j < words; ++j)
      unit.set_moments(c.host_state().hbm, base + j, values[i][static_cast<size_t>(j)],
                       values[np + i][static_cast<size_t>(j)]);
  }
}

void write_model_state(core::Core& c, const compiler::CompiledProgram& p, const Tensors& values) {
  write_tensors(c, p.model_state, values, "model state");
}

std::pair<Tensors, Tensors> split_checkpoint_state(const Tensors& state,
                                                   const compiler::CompiledProgram& p) {
  const size_t kept = std::min(state.size(), p.model_state.size());
  const auto split = state.end() - static_cast<std::ptrdiff_t>(kept);
  return {Tensors(state.begin(), split), Tensors(split, state.end())};
}

void start_replica(core::Core& c, const compiler::CompiledProgram& p, const Tensors& params) {
  write_params(c, p, params);
  if (!p.adam_unit.used) return;
  c.load(compiler::adam_start_program(p.adam_unit.init_program, p.adam_unit.flag));
  c.run();
}

}  // namespace tessera::runtime
