// Encoder and validating decoder of slot words and bundles (contract in instruction.h).
#include "isa/encoding.h"

#include <string>

#include "common/error.h"
#include "isa/operands.h"

namespace tessera::isa {
namespace {

[[noreturn]] void invalid(Slot slot, const std::string& why) {
  throw Error(fmt::format("slot {}", kSlotName[static_cast<int>(slot)]),
              "invalid encoding: " + why);
}

void check_fields(const Instr& in, Slot slot) {
  std::string_view mn = op_info(in.op).mnemonic;
  for (Field f : {Field::D, Field::A, Field::B, Field::C}) {
    uint8_t v = field_value(in, f);
    if (!uses_field(in.op, f) && v != 0) {
      invalid(slot, fmt::format("'{}' does not use field {}, which must be 0 (is {})", mn,
                                field_letter(f), v));
    }
  }
  if (!uses_imm(in.op) && in.imm != 0) {
    invalid(slot, fmt::format("'{}' takes no immediate, which must be 0 (is {})", mn, in.imm));
  }
}

void check_imm_operands(const Instr& in, Slot slot) {
  for (const Operand& o : signature(in.op)) {
    if (o.kind == OperandKind::Special && (in.imm < 0 || in.imm >= kNumSpecialRegs)) {
      invalid(slot, fmt::format("special register {} does not exist (0..{})", in.imm,
                                kNumSpecialRegs - 1));
    }
    if (o.kind == OperandKind::Label && in.imm < 0) {
      invalid(slot, fmt::format("branch target {} is negative", in.imm));
    }
  }
}

}  // namespace

uint64_t encode(const Instr& in) {
  TESSERA_CHECK(
      in.d <= kRegFieldMax && in.a <= kRegFieldMax && in.b <= kRegFieldMax && in.c <= kRegFieldMax,
      "register fields are 6 bits");
  return static_cast<uint64_t>(in.op) | static_cast<uint64_t>(in.d) << 8 |
         static_cast<uint64_t>(in.a) << 14 | static_cast<uint64_t>(in.b) << 20 |
         static_cast<uint64_t>(in.c) << 26 |
         static_cast<uint64_t>(static_cast<uint32_t>(in.imm)) << 32;
}

// Register and flag fields are 6 bits, so every value 0..63 is architecturally valid here (the
// CoreSpec may allow fewer registers; the core checks that); what remains to check is the opcode,
// its slot class, that unused fields/imm are zero and the imm-held operands' ranges.
Instr decode(uint64_t word, Slot slot) {
  unsigned opcode = word & 0xff;
  if (opcode >= static_cast<unsigned>(kNumOpcodes))
    invalid(slot, fmt::format("unknown opcode {}", opcode));
  Instr in;
  in.op = static_cast<Opcode>(opcode);
  in.d = (word >> 8) & 63;
  in.a = (word >> 14) & 63;
  in.b = (word >> 20) & 63;
  in.c = (word >> 26) & 63;
  in.imm = static_cast<int32_t>(static_cast<uint32_t>(word >> 32));
  const OpInfo& info = op_info(in.op);
  SlotClass want = kSlotClass[static_cast<int>(slot)];
  if (info.slot != SlotClass::Any && info.slot != want) {
    invalid(slot,
            fmt::format("'{}' is a {} op; slot {} takes {} ops", info.mnemonic,
                        to_string(info.slot), kSlotName[static_cast<int>(slot)], to_string(want)));
  }
  check_fields(in, slot);
  check_imm_operands(in, slot);
  return in;
}

void encode_bundle(const Bundle& b, std::span<uint8_t> out) {
  TESSERA_CHECK(out.size() >= static_cast<size_t>(kBundleBytes), "bundle buffer too small");
  for (int s = 0; s < kNumSlots; ++s) store_le64(out.data() + 8 * s, encode(b.slot[s]));
}

Bundle decode_bundle(std::span<const uint8_t> in) {
  TESSERA_CHECK(in.size() >= static_cast<size_t>(kBundleBytes), "bundle buffer too small");
  Bundle b;
  for (int s = 0; s < kNumSlots; ++s)
    b.slot[s] = decode(load_le64(in.data() + 8 * s), static_cast<Slot>(s));
  return b;
}

uint64_t load_le64(const uint8_t* p) {
  return static_cast<uint64_t>(load_le32(p)) | static_cast<uint64_t>(load_le32(p + 4)) << 32;
}

uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

void store_le64(uint8_t* p, uint64_t v) {
  store_le32(p, static_cast<uint32_t>(v));
  store_le32(p + 4, static_cast<uint32_t>(v >> 32));
}

void store_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace tessera::isa
