// Operand signatures of the opcode table, parsed once, and the registers an instruction reads and
// writes. Everything that walks operands (encoder checks, assembler, disassembler, random bundle
// generator, the core's scoreboard) goes through signature(); no per-opcode operand code exists.
//
// Signature grammar (see opcodes.def): comma-separated operands, each one of
//   sX vX mX     register of file s/v/m in field X (D, A, B or C)
//   imm          32-bit immediate in imm
//   label        code address (bundle index) in imm
//   [sX+imm]     memory operand: base scalar register in field X, offset in imm
//   sr           special register number in imm
//   #X           sync flag id 0..63 in field X
//   uX           matrix unit (MXU) index in field X, written `mxuN`; always the last operand and
//                optional: omitted, it is MXU 0 (and the disassembler leaves out `mxu0`)
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "isa/instruction.h"
#include "isa/opcodes.h"

namespace tessera::isa {

enum class OperandKind : uint8_t { SReg, VReg, MReg, Imm, Label, Mem, Special, Flag, Mxu };
enum class Field : uint8_t { D, A, B, C };
inline constexpr int kNumFields = 4;

struct Operand {
  OperandKind kind;
  Field field = Field::D;  // register / flag field; for Mem the base register's field
};

// Register files addressed by register fields.
enum class RegFile : uint8_t { Scalar, Vector, Mask };

struct RegRef {
  RegFile file;
  uint8_t index;
  friend bool operator==(const RegRef&, const RegRef&) = default;
};

// Largest value a flag operand may hold (the 6-bit field).
inline constexpr int kMaxFlagId = 63;
// Most MXUs a core may have (core.mxu.count); the assembler's default range for `mxuN`.
inline constexpr int kMaxMxus = 8;

// The parsed signature of `op` (empty for ops without operands).
std::span<const Operand> signature(Opcode op);
// True if some operand of `op` lives in imm (imm, label, [sX+imm], sr).
bool uses_imm(Opcode op);
// True if some operand of `op` lives in register field `f`.
bool uses_field(Opcode op, Field f);

uint8_t field_value(const Instr& in, Field f);
void set_field(Instr& in, Field f, uint8_t value);
char field_letter(Field f);

// Register file of a register operand kind (SReg/VReg/MReg, or the base of Mem).
RegFile reg_file(OperandKind k);
bool is_register(OperandKind k);         // SReg, VReg, MReg
std::string_view reg_prefix(RegFile f);  // "s", "v", "m"

// Registers an instruction writes, at most 2 (a destination, and the counter of `loop`).
// Destinations are the register operands in field D, except for DMA ops whose sD is an address;
// `loop sA` also writes sA.
// A small value type: iterate it directly (`for (RegRef r : written_registers(in))`), which keeps
// the temporary alive for the loop. view() returns a copy for the same reason (a span into a
// temporary would dangle).
struct RegList {
  RegRef reg[4];
  int count = 0;
  const RegRef* begin() const { return reg; }
  const RegRef* end() const { return reg + count; }
  int size() const { return count; }
  RegList view() const { return *this; }
};
RegList written_registers(const Instr& in);
// Registers an instruction reads (every register operand that is not a pure destination).
RegList read_registers(const Instr& in);

}  // namespace tessera::isa
