#include "compiler/collectives.h"

#include <bit>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/collective_algorithm.h"
#include "isa/disassembler.h"
#include "isa/opcodes.h"
#include "numerics/reduce.h"

namespace tessera::compiler {

namespace {

// The collective programs are hand-laid, so the core they are laid out for only bounds their
// registers: every core the library runs on has the reference register files.
const core::CoreSpec& layout_spec() {
  static const core::CoreSpec spec;
  return spec;
}

isa::Program program_for(const CollectiveSpec& spec, int processor) {
  Codegen cg(layout_spec(), false);
  HeldRegs regs(1, layout_spec().scalar_regs - 1);
  emit_collective(cg, regs, spec, processor);
  isa::Program p;
  p.code = cg.em().finish();
  return p;
}

// processor -1 (the index from %pid) passes unless `specialised`.
void check_processor(const CollectiveSpec& spec, int processor, bool specialised = false) {
  if (processor >= spec.processors || (specialised && processor < 0))
    throw Error("collective",
                fmt::format("processor {} outside 0..{}", processor, spec.processors - 1));
}

}  // namespace

CollectiveRegs::CollectiveRegs(HeldRegs& p)
    : pool(p),
      pid(p.take()),
      n_or_coord(p.take()),
      next(p.take()),
      prev(p.take()),
      tmp(p.take()),
      steps(p.take()) {
  for (int& r : t) r = p.take();
  for (int& r : frag) r = p.take();
  for (int& r : segment) r = p.take();
}

CollectiveRegs::~CollectiveRegs() {
  for (int r : {pid, n_or_coord, next, prev, tmp, steps}) pool.give(r);
  for (int r : t) pool.give(r);
  for (int r : frag) pool.give(r);
  for (int r : segment) pool.give(r);
}

void emit_load_pid(Codegen& cg, int pid, int processor) {
  if (processor < 0)
    cg.put(isa::Opcode::SMFSR, pid, 0, 0, 0, static_cast<int32_t>(isa::SpecialReg::Pid));
  else
    cg.put(isa::Opcode::SLI, pid, 0, 0, 0, processor);
}

isa::Opcode reduce_send_op(const CollectiveSpec& spec) {
  return spec.combine == core::XCombine::Max ? isa::Opcode::XSENDMAX : isa::Opcode::XSENDADD;
}

std::unique_ptr<CollectiveAlgorithmCode> make_collective(const CollectiveSpec& spec) {
  validate(spec);
  if (spec.algorithm == CollectiveAlgorithm::kTorus) return make_torus_collective(spec);
  return make_ring_collective(spec);
}

uint32_t combine_words(core::XCombine c, uint32_t local, uint32_t received) {
  const float a = std::bit_cast<float>(local), b = std::bit_cast<float>(received);
  return std::bit_cast<uint32_t>(c == core::XCombine::Max ? numerics::fmax_ieee(a, b) : a + b);
}

const char* algorithm_name(CollectiveAlgorithm a) {
  return a == CollectiveAlgorithm::kTorus ? "torus" : "ring";
}

CollectiveAlgorithm algorithm_from_name(const std::string& name, const std::string& where) {
  if (name == "ring") return CollectiveAlgorithm::kRing;
  if (name == "torus") return CollectiveAlgorithm::kTorus;
  throw Error(where, fmt::format("'{}': expected ring or torus", name));
}

int collective_supersteps(const CollectiveSpec& spec) {
  return make_collective(spec)->supersteps();
}

std::pair<uint32_t, uint32_t> split_range(uint32_t total, int parts, int i) {
  const auto p = static_cast<uint32_t>(parts), k = static_cast<uint32_t>(i);
  const uint32_t q = total / p, r = total % p;
  const uint32_t begin = k * q + std::min(k, r);
  return {begin, begin + q + (k < r ? 1u : 0u)};
}

void validate(const CollectiveSpec& spec) {
  if (spec.processors < 1)
    throw Error("collective.processors", fmt::format("{}: need at least 1", spec.processors));
  if (spec.rings < 1 || spec.rings > 6)
    throw Error("collective.rings", fmt::format("{}: must be 1..6", spec.rings));
  if (spec.directions < 1 || spec.directions > 2)
    throw Error("collective.directions", fmt::format("{}: must be 1 or 2", spec.directions));
  static_assert(6 * 2 <= kMaxChunks);
  if (spec.root < 0 || spec.root >= spec.processors)
    throw Error("collective.root",
                fmt::format("{} is not a processor (0..{})", spec.root, spec.processors - 1));
  if (spec.combine == core::XCombine::Store)
    throw Error("collective.combine", "all-reduce needs add or max");
  if (spec.algorithm == CollectiveAlgorithm::kTorus)
    validate_torus(spec);
  else if (!spec.grid.empty())
    throw Error("collective.grid", "only the torus algorithm takes a grid");
}

void emit_collective(Codegen& cg, HeldRegs& regs, const CollectiveSpec& spec, int processor) {
  make_collective(spec)->emit(cg, regs, processor);
}

isa::Program collective_program(const CollectiveSpec& spec) {
  return program_for(spec, -1);
}

isa::Program collective_program_for(const CollectiveSpec& spec, int processor) {
  validate(spec);
  check_processor(spec, processor, true);
  isa::Program p = program_for(spec, processor);
  p.index = static_cast<uint32_t>(processor);
  return p;
}

std::string collective_asm(const CollectiveSpec& spec) {
  return isa::disassemble(collective_program(spec));
}

std::string collective_asm_for(const CollectiveSpec& spec, int processor) {
  isa::Program p = collective_program_for(spec, processor);
  p.index = 0;  // the text cannot express it
  return isa::disassemble(p);
}

int collective_steps(const CollectiveSpec& spec) {
  validate(spec);
  if (spec.kind != CollectiveKind::kAllReduce)
    throw Error("collective", "single supersteps exist for the all-reduce only");
  return collective_supersteps(spec);
}

void emit_collective_step(Codegen& cg, HeldRegs& regs, const CollectiveSpec& spec, int step,
                          int processor) {
  const int steps = collective_steps(spec);
  if (step < 0 || step >= steps)
    throw Error("collective", fmt::format("superstep {} outside 0..{}", step, steps - 1));
  check_processor(spec, processor);
  make_collective(spec)->emit_superstep(cg, regs, step, processor);
}

std::string collective_step_asm(const CollectiveSpec& spec, int step, int processor) {
  Codegen cg(layout_spec(), false);
  HeldRegs regs(1, layout_spec().scalar_regs - 1);
  emit_collective_step(cg, regs, spec, step, processor);
  isa::Program p;
  p.code = cg.em().finish();
  p.code.pop_back();  // finish()'s halt: the superstep falls through
  return isa::disassemble(p);
}

std::vector<uint32_t> collective_reference(const CollectiveSpec& spec,
                                           const std::vector<std::vector<uint32_t>>& inputs) {
  validate(spec);
  if (static_cast<int>(inputs.size()) != spec.processors)
    throw Error("collective_reference", "one input per processor");
  for (const auto& in : inputs)
    if (in.size() != spec.words)
      throw Error("collective_reference", "every input has `words` words");
  if (spec.kind == CollectiveKind::kBroadcast) return inputs[static_cast<size_t>(spec.root)];
  return make_collective(spec)->reference(inputs);
}

}  // namespace tessera::compiler
