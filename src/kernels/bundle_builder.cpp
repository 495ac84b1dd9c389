#include "kernels/bundle_builder.h"

#include <string>

#include "common/error.h"
#include "isa/opcodes.h"

namespace tessera::kernels {

namespace {

using isa::Instr;
using isa::Opcode;
using isa::SlotClass;

bool empty(const isa::Bundle& b) {
  for (const Instr& in : b.slot)
    if (in.op != Opcode::NOP) return false;
  return true;
}

}  // namespace

void BundleBuilder::grow(int64_t at) {
  if (at < 0)
    throw Error("kernel generator", "bundle index " + std::to_string(at) + " is negative");
  if (at >= size()) m_bundles.resize(static_cast<size_t>(at) + 1);
}

int BundleBuilder::free_count(int64_t at, SlotClass cls) const {
  if (at < 0) return 0;
  int n = 0;
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (isa::kSlotClass[s] == cls &&
        (at >= size() || m_bundles[static_cast<size_t>(at)].slot[s].op == Opcode::NOP))
      ++n;
  return n;
}

bool BundleBuilder::has_free(int64_t at, SlotClass cls) const {
  return free_count(at, cls) > 0;
}

void BundleBuilder::put(int64_t at, const Instr& in) {
  grow(at);
  const SlotClass cls = isa::op_info(in.op).slot;
  isa::Bundle& b = m_bundles[static_cast<size_t>(at)];
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (isa::kSlotClass[s] == cls && b.slot[s].op == Opcode::NOP) {
      b.slot[s] = in;
      return;
    }
  throw Error("kernel generator", "bundle " + std::to_string(at) + " has no free " +
                                      std::string(isa::to_string(cls)) + " slot for " +
                                      std::string(isa::op_info(in.op).mnemonic));
}

void BundleBuilder::put_first(int64_t at, const Instr& in) {
  grow(at);
  const SlotClass cls = isa::op_info(in.op).slot;
  isa::Bundle& b = m_bundles[static_cast<size_t>(at)];
  std::vector<int> slots;
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (isa::kSlotClass[s] == cls) slots.push_back(s);
  size_t free = 0;
  while (free < slots.size() && b.slot[slots[free]].op != Opcode::NOP) ++free;
  if (free == slots.size()) return put(at, in);  // throws: no free slot
  for (size_t k = free; k > 0; --k) b.slot[slots[k]] = b.slot[slots[k - 1]];
  b.slot[slots[0]] = in;
}

int64_t BundleBuilder::find_forward(int64_t at, SlotClass cls) const {
  for (int64_t i = at < 0 ? 0 : at;; ++i)
    if (has_free(i, cls)) return i;
}

int64_t BundleBuilder::find_backward(int64_t at, int64_t floor, SlotClass cls) const {
  for (int64_t i = at; i >= floor && i >= 0; --i)
    if (has_free(i, cls)) return i;
  return -1;
}

std::vector<isa::Bundle> BundleBuilder::finish() const {
  std::vector<isa::Bundle> out;
  for (const isa::Bundle& b : m_bundles)
    if (!empty(b)) out.push_back(b);
  isa::Bundle halt;
  halt[isa::Slot::S0] = op_none(Opcode::HALT);
  out.push_back(halt);
  return out;
}

Instr op_d_imm(Opcode op, int d, int32_t imm) {
  Instr in{op};
  in.d = static_cast<uint8_t>(d);
  in.imm = imm;
  return in;
}

Instr op_d_a_imm(Opcode op, int d, int a, int32_t imm) {
  Instr in = op_d_imm(op, d, imm);
  in.a = static_cast<uint8_t>(a);
  return in;
}

Instr op_store(Opcode op, int a, int b, int32_t imm) {
  Instr in{op};
  in.a = static_cast<uint8_t>(a);
  in.b = static_cast<uint8_t>(b);
  in.imm = imm;
  return in;
}

Instr op_a(Opcode op, int a) {
  Instr in{op};
  in.a = static_cast<uint8_t>(a);
  return in;
}

Instr op_a_b(Opcode op, int a, int b) {
  Instr in = op_a(op, a);
  in.b = static_cast<uint8_t>(b);
  return in;
}

Instr op_d(Opcode op, int d) {
  Instr in{op};
  in.d = static_cast<uint8_t>(d);
  return in;
}

Instr op_none(Opcode op) {
  return Instr{op};
}

Instr op_dma(Opcode op, int d, int a, int b, int flag) {
  Instr in{op};
  in.d = static_cast<uint8_t>(d);
  in.a = static_cast<uint8_t>(a);
  in.b = static_cast<uint8_t>(b);
  in.c = static_cast<uint8_t>(flag);
  return in;
}

Instr op_wait(int flag, int32_t count) {
  Instr in{Opcode::WAIT};
  in.a = static_cast<uint8_t>(flag);
  in.imm = count;
  return in;
}

}  // namespace tessera::kernels
