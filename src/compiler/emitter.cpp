#include "compiler/emitter.h"

#include <algorithm>
#include <string_view>

#include "common/error.h"
#include "isa/opcodes.h"
#include "isa/operands.h"
#include "kernels/loop_roll.h"

namespace tessera::compiler {

namespace {

int file_index(char f) {
  return f == 's' ? 0 : f == 'v' ? 1 : 2;
}

int field(const isa::Instr& in, char f) {
  switch (f) {
    case 'D':
      return in.d;
    case 'A':
      return in.a;
    case 'B':
      return in.b;
    default:
      return in.c;
  }
}

bool slot_in_class(int slot, isa::SlotClass cls) {
  return isa::kSlotClass[static_cast<size_t>(slot)] == cls;
}

// DMA requests and waits share one order (a wait must follow the DMAs it waits for).
bool has_label(isa::Opcode op) {
  for (const isa::Operand& o : isa::signature(op))
    if (o.kind == isa::OperandKind::Label) return true;
  return false;
}

size_t order_key(isa::Unit u) {
  return static_cast<size_t>(u == isa::Unit::Sync ? isa::Unit::Dma : u);
}

}  // namespace

std::vector<RegUse> reg_uses(const isa::Instr& in) {
  const isa::OpInfo& info = isa::op_info(in.op);
  const bool dma = info.unit == isa::Unit::Dma;
  std::vector<RegUse> out;
  const std::string_view sig = info.operands;
  for (size_t i = 0; i + 1 < sig.size(); ++i) {
    const char f = sig[i];
    const char x = sig[i + 1];
    if ((f != 's' && f != 'v' && f != 'm') || (x != 'D' && x != 'A' && x != 'B' && x != 'C'))
      continue;
    if (i > 0 && sig[i - 1] != ',' && sig[i - 1] != '[') continue;
    out.push_back(RegUse{f, field(in, x), x == 'D' && !dma});
  }
  return out;
}

Emitter::Emitter(const core::CoreSpec& spec) : m_spec(spec) {
  const int counts[3] = {spec.scalar_regs, spec.vector_regs, spec.mask_regs};
  for (int f = 0; f < 3; ++f) {
    m_ready[f].assign(static_cast<size_t>(counts[f]), 0);
    m_read[f].assign(static_cast<size_t>(counts[f]), -1);
  }
  m_unit_last.fill(0);
}

int64_t& Emitter::ready(char file, int index) {
  return m_ready[file_index(file)].at(static_cast<size_t>(index));
}
int64_t& Emitter::last_read(char file, int index) {
  return m_read[file_index(file)].at(static_cast<size_t>(index));
}

bool Emitter::slot_free(int64_t at, isa::SlotClass cls) const {
  if (at >= size()) return true;
  const isa::Bundle& b = m_bundles[static_cast<size_t>(at)];
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (slot_in_class(s, cls) && b.slot[static_cast<size_t>(s)].op == isa::Opcode::NOP) return true;
  return false;
}

int Emitter::put(int64_t at, const isa::Instr& in) {
  if (at >= size()) m_bundles.resize(static_cast<size_t>(at + 1));
  isa::Bundle& b = m_bundles[static_cast<size_t>(at)];
  const isa::SlotClass cls = isa::op_info(in.op).slot;
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (slot_in_class(s, cls) && b.slot[static_cast<size_t>(s)].op == isa::Opcode::NOP) {
      b.slot[static_cast<size_t>(s)] = in;
      return s;
    }
  throw Error("emitter", "bundle " + std::to_string(at) + " has no free " +
                             std::string(isa::to_string(cls)) + " slot for " +
                             std::string(isa::op_info(in.op).mnemonic));
}

int64_t Emitter::emit(const isa::Instr& in, int64_t row_lo, int64_t row_hi) {
  const isa::OpInfo& info = isa::op_info(in.op);
  const std::vector<RegUse> uses = reg_uses(in);
  int64_t at = m_floor;
  for (const RegUse& u : uses) {
    if (!u.write) at = std::max(at, ready(u.file, u.index));
    if (u.write) {
      at = std::max(at, ready(u.file, u.index));  // WAW: after the previous value is complete
      at = std::max(at, last_read(u.file, u.index));
    }
  }
  const bool ordered = info.unit != isa::Unit::Scalar && info.unit != isa::Unit::Vector &&
                       info.unit != isa::Unit::VectorMem;
  if (ordered) at = std::max(at, m_unit_last[order_key(info.unit)]);
  const bool is_store = info.slot == isa::SlotClass::VecStore;
  if (row_lo >= 0)
    for (const Access& a : m_vmem)
      if (a.lo <= row_hi && row_lo <= a.hi && (a.store || is_store)) at = std::max(at, a.at + 1);
  while (!slot_free(at, info.slot)) ++at;
  put(at, in);
  const int lat = std::max(1, m_spec.latency_of(info.latency));
  for (const RegUse& u : uses) {
    if (u.write) {
      ready(u.file, u.index) = at + lat;
    } else {
      int64_t& r = last_read(u.file, u.index);
      r = std::max(r, at);
    }
  }
  if (ordered) m_unit_last[order_key(info.unit)] = at;
  if (row_lo >= 0) m_vmem.push_back(Access{row_lo, row_hi, at, is_store});
  return at;
}

void Emitter::barrier() {
  m_floor = std::max(m_floor, size());
  m_unit_last.fill(m_floor);
  m_vmem.clear();
}

void Emitter::close_loop(int64_t top, int counter) {
  isa::Instr in;
  in.op = isa::Opcode::LOOP;
  in.a = static_cast<uint8_t>(counter);
  in.imm = static_cast<int32_t>(top);
  int64_t at = std::max({m_floor, top, size() - 1, ready('s', counter), last_read('s', counter)});
  while (!slot_free(at, isa::SlotClass::Scalar)) ++at;
  put(at, in);
  barrier();
}

void Emitter::roll_since(int64_t first) {
  barrier();
  for (const LabelRef& r : m_label_refs)
    TESSERA_CHECK(r.bundle < first, "emitter: loop rolling over a labelled branch");
  std::vector<isa::Bundle> code(m_bundles.begin() + first, m_bundles.end());
  for (isa::Bundle& b : code)
    for (isa::Instr& in : b.slot)
      if (has_label(in.op)) in.imm = static_cast<int32_t>(in.imm - first);
  m_bundles.resize(static_cast<size_t>(first));
  kernels::RollOptions options;
  options.nested = m_nested;
  // Nested rolling (a program that does not fit otherwise): loops as short as one period, so
  // that no run of copies shorter than a 64-bundle body is left straight after a loop.
  if (m_nested) options.min_body = 16;
  append(kernels::roll_loops(code, m_spec, options).code);
}

void Emitter::append(const std::vector<isa::Bundle>& code) {
  barrier();
  const int64_t base = size();
  m_bundles.insert(m_bundles.end(), code.begin(), code.end());
  for (int64_t i = base; i < size(); ++i)
    for (isa::Instr& in : m_bundles[static_cast<size_t>(i)].slot)
      if (has_label(in.op)) in.imm = static_cast<int32_t>(in.imm + base);
  // The appended code may use any register: later readers and writers go after it.
  forget_registers();
}

void Emitter::forget_registers() {
  m_floor = size();
  for (int f = 0; f < 3; ++f) {
    std::fill(m_ready[f].begin(), m_ready[f].end(), m_floor);
    std::fill(m_read[f].begin(), m_read[f].end(), m_floor - 1);
  }
  m_unit_last.fill(m_floor);
  m_vmem.clear();
}

int64_t Emitter::place(const isa::Instr& in, bool join) {
  TESSERA_CHECK(!join || size() > 0, "emitter: nothing to join");
  const int64_t at = join ? size() - 1 : std::max(m_floor, size());
  put(at, in);
  forget_registers();
  return at;
}

int Emitter::new_label() {
  m_labels.push_back(-1);
  return static_cast<int>(m_labels.size()) - 1;
}

void Emitter::bind(int label) {
  barrier();
  int64_t& at = m_labels.at(static_cast<size_t>(label));
  TESSERA_CHECK(at < 0, "emitter: label bound twice");
  at = m_floor;
}

int64_t Emitter::place_branch(const isa::Instr& in, int label, bool join) {
  TESSERA_CHECK(has_label(in.op), "emitter: a branch needs a label operand");
  TESSERA_CHECK(label >= 0 && label < static_cast<int>(m_labels.size()), "emitter: no such label");
  const int64_t at = join ? size() - 1 : std::max(m_floor, size());
  const int slot = put(at, in);
  forget_registers();
  m_label_refs.push_back(LabelRef{at, slot, label});
  return at;
}

int64_t Emitter::final_index(int64_t at) const {
  int64_t kept = 0;
  for (int64_t i = 0; i < at && i < size(); ++i)
    if (m_bundles[static_cast<size_t>(i)] != isa::Bundle{}) ++kept;
  return kept;
}

std::vector<isa::Bundle> Emitter::finish() const {
  std::vector<isa::Bundle> code = m_bundles;
  for (const LabelRef& r : m_label_refs) {
    const int64_t at = m_labels[static_cast<size_t>(r.label)];
    if (at < 0) throw Error("emitter", "a branch to a label that was never bound");
    code[static_cast<size_t>(r.bundle)].slot[static_cast<size_t>(r.slot)].imm =
        static_cast<int32_t>(at);
  }
  std::vector<isa::Bundle> out;
  out.reserve(code.size() + 1);
  std::vector<int32_t> new_index(code.size() + 1);  // an empty bundle maps to the next kept one
  for (size_t i = 0; i < code.size(); ++i) {
    new_index[i] = static_cast<int32_t>(out.size());
    if (code[i] != isa::Bundle{}) out.push_back(code[i]);
  }
  new_index[code.size()] = static_cast<int32_t>(out.size());
  for (isa::Bundle& b : out)
    for (isa::Instr& in : b.slot)
      if (has_label(in.op)) in.imm = new_index.at(static_cast<size_t>(in.imm));
  isa::Bundle halt;
  halt.slot[0].op = isa::Opcode::HALT;
  out.push_back(halt);
  return out;
}

}  // namespace tessera::compiler
