// The Adam optimizer unit's own instruction set (docs/adam-unit.md): opcode
// table, 64-bit encoding, assembler and disassembler.
//
// Encoding of one instruction: a 64-bit little-endian word
//   bits  0..7   opcode (AdamOp; 0 is not an instruction, so zeroed memory never decodes)
//   bits  8..11  field a (address register a0..a7)    bits 12..15 field b (address register)
//   bits 16..31  zero
//   bits 32..63  imm (unsigned 32-bit: element count, word count, address or instruction index)
// Fields an op does not use must be zero; anything else is an invalid encoding. In HBM a program
// is stored as 2 words per instruction (low word first).
//
// Assembly: one instruction per line; `// comment`; `name:` labels (alone or before an
// instruction); operands comma-separated: address registers a0..a7, immediates (decimal or 0x
// hex), labels or instruction indices for branch targets. The disassembler prints branch targets
// as indices, so disassemble -> assemble is the identity on the words.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::isa {

// X(ENUM, "mnemonic", "operands", "summary"); operands: "a" (register into field a), "b" (register
// into field b), "imm", "label" (instruction index into imm).
#define TESSERA_ADAM_OPS(X)                                                                       \
  X(IIO, "iio", "imm",                                                                            \
    "INSTRUCTION_IO: DMA imm instructions from the start address into the instruction cache "     \
    "(must be instruction 0)")                                                                    \
  X(HPIO, "hpio", "a", "HYPERPARAMETER_IO: read the 16-word hyperparameter block at HBM word aA") \
  X(ASSIGN, "assign", "a,imm",                                                                    \
    "ASSIGN: n = imm elements; m = v = 0; t = 0; spill area (if m, v exceed the data cache) at "  \
    "HBM word aA")                                                                                \
  X(SETA, "seta", "a,imm", "aA = imm (HBM word address)")                                         \
  X(MEST, "mest", "",                                                                             \
    "MOMENT_ESTIMATE: t += 1; bias-correction scalars for t; block = 0; temp sum = 0")            \
  X(DIO, "dio", "a,b", "DATA_IO: theta block from HBM aA + block*B, g block from aB + block*B")   \
  X(XFERIN, "xfer.in", "", "TRANSFER: m, v of the block, data cache -> processing module")        \
  X(MUPD, "mupd", "", "MOMENT_UPDATE: m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2")                \
  X(XFEROUT, "xfer.out", "", "TRANSFER: m, v of the block, processing module -> data cache")      \
  X(PUPD, "pupd", "", "PARAM_UPDATE: [AdamW decay] theta update, temp vector, temp sum")          \
  X(DBIO, "dbio", "a", "DATABACK_IO: theta block to HBM aA + block*B")                            \
  X(BNEXT, "bnext", "label", "block += 1; branch to label while block < number of blocks")        \
  X(CCHECK, "ccheck", "label",                                                                    \
    "CONVERGENCE_CHECK: temp2 = temp sum / n; branch to label if temp2 < ct")                     \
  X(ILOOP, "iloop", "label",                                                                      \
    "iterations += 1; branch to label unless max_iters > 0 and iterations >= max_iters")          \
  X(JMP, "jmp", "label", "branch to label")                                                       \
  X(HALT, "halt", "", "stop; the unit signals the tensor core's completion flag")

enum class AdamOp : uint8_t {
  Invalid = 0,
#define TESSERA_ADAM_ENUM(e, mn, ops, summary) e,
  TESSERA_ADAM_OPS(TESSERA_ADAM_ENUM)
#undef TESSERA_ADAM_ENUM
};

struct AdamOpInfo {
  AdamOp op;
  std::string_view mnemonic;
  std::string_view operands;
  std::string_view summary;
};

inline constexpr std::array kAdamOpTable = {
#define TESSERA_ADAM_INFO(e, mn, ops, summary) AdamOpInfo{AdamOp::e, mn, ops, summary},
    TESSERA_ADAM_OPS(TESSERA_ADAM_INFO)
#undef TESSERA_ADAM_INFO
};
inline constexpr int kNumAdamOps = static_cast<int>(kAdamOpTable.size());
inline constexpr int kAdamAddrRegs = 8;

// op != Invalid.
const AdamOpInfo& adam_op_info(AdamOp op);
std::optional<AdamOp> adam_op_from_mnemonic(std::string_view mnemonic);

struct AdamInstr {
  AdamOp op = AdamOp::Invalid;
  uint8_t a = 0, b = 0;
  uint32_t imm = 0;
  friend bool operator==(const AdamInstr&, const AdamInstr&) = default;
};

uint64_t adam_encode(const AdamInstr& in);
// Throws tessera::Error("adam instruction <index>", why) on an invalid word.
AdamInstr adam_decode(uint64_t word, int64_t index);

// Assembles text into instruction words; errors name "<file>:<line>".
std::vector<uint64_t> adam_assemble(std::string_view text, const std::string& file = "<adam>");
std::string adam_disassemble_one(const AdamInstr& in);
// One instruction per line; throws on an invalid word.
std::string adam_disassemble(const std::vector<uint64_t>& words);

}  // namespace tessera::isa
