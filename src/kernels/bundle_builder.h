// BundleBuilder: places instructions into the slots of a growing straight-line sequence of
// bundles, for kernel generators that schedule by hand (gemm.h).
//
// Placement: an op goes into the lowest free slot of its class in the bundle asked for (so the
// order of placement within a bundle is the slot order, which the bundle semantics follow for unit
// state: place `mflip` before the `mmul` that must see the new tile). Asking for a full slot class
// is a generator bug (tessera::Error). The search helpers find the nearest bundle with a free slot
// forwards or backwards. finish() drops bundles that stayed empty (straight-line code has no
// branch targets, so removing them changes no semantics) and appends `halt`.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/instruction.h"

namespace tessera::kernels {

class BundleBuilder {
 public:
  // Places `in` into bundle `at` (growing the sequence as needed).
  void put(int64_t at, const isa::Instr& in);
  // Places `in` in the FIRST slot of its class, moving the ops already there one slot later (so
  // it executes before them).
  void put_first(int64_t at, const isa::Instr& in);
  bool has_free(int64_t at, isa::SlotClass cls) const;
  int free_count(int64_t at, isa::SlotClass cls) const;
  // First bundle >= at (or last bundle <= at, >= floor; -1 if none) with a free slot of `cls`.
  int64_t find_forward(int64_t at, isa::SlotClass cls) const;
  int64_t find_backward(int64_t at, int64_t floor, isa::SlotClass cls) const;
  int64_t size() const { return static_cast<int64_t>(m_bundles.size()); }

  // The sequence without empty bundles, ending with a bundle holding only `halt`.
  std::vector<isa::Bundle> finish() const;

 private:
  void grow(int64_t at);
  std::vector<isa::Bundle> m_bundles;
};

// Instruction constructors (fields as the operand signatures in isa/opcodes.def place them).
isa::Instr op_d_imm(isa::Opcode op, int d, int32_t imm);           // sli sD, imm
isa::Instr op_d_a_imm(isa::Opcode op, int d, int a, int32_t imm);  // saddi, vld vD,[sA+imm]
isa::Instr op_store(isa::Opcode op, int a, int b, int32_t imm);    // vst vA,[sB+imm]
isa::Instr op_a(isa::Opcode op, int a);                            // mlw vA, mmul vA
isa::Instr op_a_b(isa::Opcode op, int a, int b);                   // mmul.st vA, sB
isa::Instr op_d(isa::Opcode op, int d);                            // mpop vD
isa::Instr op_none(isa::Opcode op);                                // mflip, halt
isa::Instr op_dma(isa::Opcode op, int d, int a, int b, int flag);  // dma.* sD,sA,sB,#C
isa::Instr op_wait(int flag, int32_t count);                       // wait #A, imm

}  // namespace tessera::kernels
