// Decoded bundles: the form the interpreters execute, built ONCE when a program is loaded.
//
// Decoding checks every operand against the configuration (register indices, sync flag ids,
// special registers). A bundle that fails is kept with its reason and faults when (and only
// when) it is executed, so unreachable junk does not stop a program from loading.
//
// Bundle semantics need every operand read at the start of the bundle. When a slot reads a
// register that an earlier slot of the same bundle writes, the decoder points that read at a
// shadow register (index >= the architectural count) and records a copy (arch -> shadow) that the
// interpreter performs before the bundle's first slot. Every other read uses the architectural
// register directly, so the common bundle costs nothing extra.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/spec.h"
#include "isa/instruction.h"
#include "isa/operands.h"

namespace tessera::core {

// One non-nop op. Register fields hold the (possibly shadow) index to READ from; writes always go
// to `d`, which the decoder sets to the architectural destination (for `loop sA` d = a).
struct DecodedOp {
  isa::Opcode op = isa::Opcode::NOP;
  uint8_t slot = 0;
  uint8_t d = 0, a = 0, b = 0, c = 0;
  isa::Unit unit = isa::Unit::None;  // isa::op_info(op).unit, kept here for the dispatch
  int32_t imm = 0;
  bool has_dest = false;
  isa::RegRef dest{isa::RegFile::Scalar, 0};  // architectural register written, if has_dest
  uint8_t vreg_reads = 0;                     // vector/mask register operands read (for energy)
};

struct ShadowCopy {
  isa::RegFile file;
  uint8_t from, to;
};

struct DecodedBundle {
  uint8_t n_ops = 0;
  uint8_t n_copies = 0;
  uint8_t n_srcs = 0;
  bool halts = false;
  int32_t fault = -1;  // index into DecodedProgram::faults, -1 if the bundle is valid
  std::array<DecodedOp, isa::kNumSlots> ops{};
  std::array<ShadowCopy, isa::kNumSlots> copies{};
  std::array<isa::RegRef, 4 * isa::kNumSlots> srcs{};  // distinct architectural registers read
};

struct DecodedProgram {
  std::vector<isa::Bundle> code;
  std::vector<DecodedBundle> bundles;
  std::vector<std::string> faults;
};

DecodedProgram decode_program(std::span<const isa::Bundle> code, const CoreSpec& spec);

// The text of a bundle / one instruction for fault messages and traces (the ISA's disassembler).
std::string bundle_text(const isa::Bundle& b);
std::string op_text(const isa::Instr& in);

}  // namespace tessera::core
