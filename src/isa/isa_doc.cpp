#include "isa/isa_doc.h"

#include <fmt/format.h>

#include "isa/instruction.h"
#include "isa/operands.h"

namespace tessera::isa {
namespace {

constexpr SlotClass kDocClasses[] = {SlotClass::Any,     SlotClass::Scalar,   SlotClass::VecAlu,
                                     SlotClass::VecLoad, SlotClass::VecStore, SlotClass::Matrix,
                                     SlotClass::Ext,     SlotClass::Misc};

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string operands_text(std::string_view sig) {
  if (sig.empty()) return "—";
  std::string out;
  for (char c : sig) out += c == ',' ? std::string(", ") : std::string(1, c);
  return "`" + out + "`";
}

std::string slots_of(SlotClass cls) {
  if (cls == SlotClass::Any) return "every slot";
  std::string out;
  int n = 0;
  for (int s = 0; s < kNumSlots; ++s) {
    if (kSlotClass[s] != cls) continue;
    out += fmt::format("{}`{}`", n++ ? ", " : "", kSlotName[s]);
  }
  return (n == 1 ? "slot " : "slots ") + out;
}

void bundle_section(std::string& out) {
  out += "## Bundle\n\n";
  out += fmt::format(
      "A bundle has {} slots, issued together; each holds one op of its class or `nop`.\n\n",
      kNumSlots);
  out += "| slot | class |\n| --- | --- |\n";
  for (int s = 0; s < kNumSlots; ++s)
    out += fmt::format("| `{}` | {} |\n", kSlotName[s], to_string(kSlotClass[s]));
  out +=
      "\nRegister operands of all slots are read at the start of the bundle; unit-internal state "
      "(MXU tiles,\n"
      "FIFOs, DMA queue, flags) is updated in slot order; a branch takes effect after its "
      "bundle.\n\n";
}

void encoding_section(std::string& out) {
  out += "## Encoding\n\n";
  out += fmt::format(
      "Each slot is one 64-bit little-endian word; a bundle is the {} words in slot order ({} "
      "bytes).\n\n",
      kNumSlots, kBundleBytes);
  out += "| bits | field |\n| --- | --- |\n";
  out += "| 0..7 | opcode (the number in the tables below; 0 = `nop`) |\n";
  out += "| 8..13 | field d |\n| 14..19 | field a |\n| 20..25 | field b |\n| 26..31 | field c |\n";
  out += "| 32..63 | imm (two's complement int32) |\n\n";
  out +=
      "Fields and imm an op does not use must be zero; an unknown opcode, an op in a slot of "
      "another class,\n"
      "or a non-zero unused field is an invalid encoding (rejected when an image is read).\n\n";
}

void operand_section(std::string& out) {
  out += "## Operands\n\n| operand | meaning | encoded in |\n| --- | --- | --- |\n";
  out += "| `sX` | scalar register `s0..s31` (32 bits) | field x |\n";
  out += "| `vX` | vector register `v0..v31` (sublanes x lanes x 32 bits) | field x |\n";
  out += "| `mX` | mask register `m0..m7` (one bit per vector element) | field x |\n";
  out +=
      "| `imm` | 32-bit immediate: decimal, `0x` hex, negative, float literal `1.5f`, or a "
      "`.const` name | imm |\n";
  out += "| `label` | code address: a label or a bundle index | imm |\n";
  out +=
      "| `[sX+imm]` | memory operand: base register plus offset, written `[s3]`, `[s3+16]`, "
      "`[s3-4]` | field x, imm |\n";
  out += "| `sr` | special register | imm |\n";
  out += fmt::format("| `#X` | sync flag id `0..{}`, written as a plain number | field x |\n",
                     kMaxFlagId);
  out +=
      "| `uX` | matrix unit index, written `mxu0`, `mxu1`, ... (below the core's "
      "`core.mxu.count`); "
      "the last operand and optional: left out, it is `mxu0` | field x |\n\n";
  out +=
      "Register counts are the architecture's defaults; a core config may set others (up to 64).\n"
      "Scalar memory and HBM are addressed in 32-bit words; vector memory in rows of `lanes` words "
      "by\n"
      "`vld`/`vst` and in words by DMA.\n\n";
}

void special_section(std::string& out) {
  out += "## Special registers\n\n| number | name | meaning |\n| --- | --- | --- |\n";
  constexpr std::string_view kMeaning[kNumSpecialRegs] = {
      "low 32 bits of the cycle counter", "high 32 bits of the cycle counter",
      "processor index register (the loader sets it from the image's index word)",
      "number of processors"};
  for (int i = 0; i < kNumSpecialRegs; ++i) {
    out += fmt::format("| {} | `{}` | {} |\n", i, kSpecialRegName[i], kMeaning[i]);
  }
  out += "\n";
}

void ops_section(std::string& out) {
  out += "## Operations\n\n";
  for (SlotClass cls : kDocClasses) {
    out += fmt::format("### {} ({})\n\n", to_string(cls), slots_of(cls));
    out +=
        "| opcode | mnemonic | operands | unit | latency class | summary |\n| --- | --- | --- | "
        "--- | --- | --- |\n";
    for (const OpInfo& info : kOpTable) {
      if (info.slot != cls) continue;
      out += fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", static_cast<int>(info.op),
                         info.mnemonic, operands_text(info.operands), to_string(info.unit),
                         to_string(info.latency), escape(info.summary));
    }
    out += "\n";
  }
}

}  // namespace

std::string isa_reference_markdown() {
  std::string out = "# tessera ISA reference\n\n";
  out +=
      "Generated from `src/isa/opcodes.def` by `tessera isa --doc`; do not edit by hand. The "
      "assembly\n"
      "syntax is described in [assembly.md](assembly.md).\n\n";
  bundle_section(out);
  encoding_section(out);
  operand_section(out);
  special_section(out);
  ops_section(out);
  out.pop_back();  // one newline at the end of the file
  return out;
}

}  // namespace tessera::isa
