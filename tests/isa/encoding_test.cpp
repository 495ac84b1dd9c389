#include "isa/encoding.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "isa/operands.h"
#include "isa/random_bundle.h"

namespace tessera::isa {
namespace {

Slot first_slot_of(SlotClass cls) {
  for (int s = 0; s < kNumSlots; ++s) {
    if (kSlotClass[s] == cls || cls == SlotClass::Any) return static_cast<Slot>(s);
  }
  return Slot::S0;
}

// An instruction of `op` with every used field and imm set to a distinct non-trivial value.
Instr full_instr(Opcode op, uint8_t reg_base, int32_t imm) {
  Instr in;
  in.op = op;
  uint8_t r = reg_base;
  for (const Operand& o : signature(op)) {
    if (o.kind == OperandKind::Special) in.imm = kNumSpecialRegs - 1;
    if (o.kind == OperandKind::Label) in.imm = imm & 0x7fffffff;
    if (o.kind == OperandKind::Imm || o.kind == OperandKind::Mem) in.imm = imm;
    if (is_register(o.kind) || o.kind == OperandKind::Mem || o.kind == OperandKind::Flag) {
      set_field(in, o.field, r++ & 63);
    }
  }
  return in;
}

TEST(Encoding, EveryOpcodeRoundTripsWithExtremeFieldsAndImmediates) {
  for (const OpInfo& info : kOpTable) {
    Slot slot = first_slot_of(info.slot);
    for (uint8_t base : {0, 1, 60}) {
      for (int32_t imm : {0, 1, -1, INT32_MIN, INT32_MAX}) {
        Instr in = full_instr(info.op, base, imm);
        EXPECT_EQ(decode(encode(in), slot), in) << info.mnemonic;
      }
    }
  }
}

TEST(Encoding, FieldsSitAtTheDocumentedBitPositions) {
  Instr in{Opcode::VFMAF, 1, 2, 3, 4, 0};
  uint64_t w = encode(in);
  EXPECT_EQ(w & 0xff, static_cast<uint64_t>(Opcode::VFMAF));
  EXPECT_EQ((w >> 8) & 63, 1u);
  EXPECT_EQ((w >> 14) & 63, 2u);
  EXPECT_EQ((w >> 20) & 63, 3u);
  EXPECT_EQ((w >> 26) & 63, 4u);
  Instr li{Opcode::SLI, 5, 0, 0, 0, -2};
  EXPECT_EQ(encode(li) >> 32, 0xfffffffeull);
  EXPECT_EQ(encode(Instr{}), 0u);
}

TEST(Encoding, NopDecodesInEverySlot) {
  for (int s = 0; s < kNumSlots; ++s) EXPECT_EQ(decode(0, static_cast<Slot>(s)), Instr{});
}

TEST(Encoding, RandomBundlesRoundTripThroughBytes) {
  RandomBundleGenerator gen(7, {.max_target = 1000});
  uint8_t buf[kBundleBytes];
  for (int i = 0; i < 2000; ++i) {
    Bundle b = gen.next();
    encode_bundle(b, buf);
    EXPECT_EQ(decode_bundle(buf), b);
  }
}

TEST(Encoding, BundleIsElevenLittleEndianWordsInSlotOrder) {
  Bundle b;
  b[Slot::MISC] = Instr{Opcode::SIGNAL, 0, 3, 0, 0, 1};
  uint8_t buf[kBundleBytes];
  encode_bundle(b, buf);
  EXPECT_EQ(load_le64(buf + 8 * 10), encode(b[Slot::MISC]));
  EXPECT_EQ(buf[80], static_cast<uint8_t>(Opcode::SIGNAL));
  for (int i = 0; i < 80; ++i) EXPECT_EQ(buf[i], 0);
}

std::string decode_error(uint64_t word, Slot slot) {
  try {
    decode(word, slot);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

uint64_t op_word(Opcode op) {
  return static_cast<uint64_t>(op);
}

TEST(Encoding, DecodeRejects_bad) {
  EXPECT_EQ(decode_error(0xff, Slot::S0), "slot s0: invalid encoding: unknown opcode 255");
  EXPECT_EQ(decode_error(kNumOpcodes, Slot::S1),
            fmt::format("slot s1: invalid encoding: unknown opcode {}", kNumOpcodes));
  EXPECT_EQ(decode_error(op_word(Opcode::VADDF), Slot::S0),
            "slot s0: invalid encoding: 'vadd.f32' is a vector-alu op; slot s0 takes scalar ops");
  EXPECT_EQ(decode_error(op_word(Opcode::SADD), Slot::MISC),
            "slot misc: invalid encoding: 'sadd' is a scalar op; slot misc takes misc ops");
  EXPECT_EQ(decode_error(op_word(Opcode::SADD) | 5ull << 26, Slot::S0),
            "slot s0: invalid encoding: 'sadd' does not use field c, which must be 0 (is 5)");
  EXPECT_EQ(decode_error(op_word(Opcode::HALT) | 1ull << 8, Slot::S1),
            "slot s1: invalid encoding: 'halt' does not use field d, which must be 0 (is 1)");
  EXPECT_EQ(decode_error(op_word(Opcode::SADD) | 7ull << 32, Slot::S0),
            "slot s0: invalid encoding: 'sadd' takes no immediate, which must be 0 (is 7)");
  EXPECT_EQ(decode_error(1ull << 14, Slot::V1),
            "slot v1: invalid encoding: 'nop' does not use field a, which must be 0 (is 1)");
  EXPECT_EQ(decode_error(op_word(Opcode::SMFSR) | 4ull << 32, Slot::S0),
            "slot s0: invalid encoding: special register 4 does not exist (0..3)");
  EXPECT_EQ(decode_error(op_word(Opcode::JMP) | 0xffffffffull << 32, Slot::S0),
            "slot s0: invalid encoding: branch target -1 is negative");
  EXPECT_EQ(decode_error(op_word(Opcode::MPOP), Slot::X0),
            "slot x0: invalid encoding: 'mpop' is a matrix op; slot x0 takes extended ops");
}

TEST(Encoding, EveryOpIsRejectedInEverySlotOfAnotherClass) {
  for (const OpInfo& info : kOpTable) {
    for (int s = 0; s < kNumSlots; ++s) {
      bool ok = info.slot == SlotClass::Any || info.slot == kSlotClass[s];
      if (ok) {
        EXPECT_NO_THROW(decode(op_word(info.op), static_cast<Slot>(s))) << info.mnemonic;
      } else {
        EXPECT_THROW(decode(op_word(info.op), static_cast<Slot>(s)), Error) << info.mnemonic;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::isa
