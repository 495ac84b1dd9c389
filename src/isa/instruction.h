// Decoded instructions, bundles and the binary encoding of one slot.
//
// Encoding of one slot: a 64-bit little-endian word
//   bits  0..7   opcode (Opcode, 0 = nop)
//   bits  8..13  field d    bits 14..19 field a    bits 20..25 field b    bits 26..31 field c
//   bits 32..63  imm (two's complement int32)
// A bundle is kNumSlots such words in slot order (S0 S1 V0 V1 VLD VST M0 M1 X0 X1 MISC): 88 bytes.
// Unused register fields and the imm of ops that take none must be zero; the decoder rejects a
// word that breaks this, an unknown opcode, or an op in a slot of the wrong class ("invalid
// encoding"), so every binary image has exactly one meaning. (The published bundle packs its
// immediates into a shared pool of 6 for 322 bits; we spend bits on a simpler fixed layout, since
// the instruction memory is sized in bundles, not bits.)
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "isa/opcodes.h"

namespace tessera::isa {

struct Instr {
  Opcode op = Opcode::NOP;
  uint8_t d = 0, a = 0, b = 0, c = 0;  // register fields (meaning given by the signature)
  int32_t imm = 0;

  friend bool operator==(const Instr&, const Instr&) = default;
};

struct Bundle {
  std::array<Instr, kNumSlots> slot{};

  Instr& operator[](Slot s) { return slot[static_cast<int>(s)]; }
  const Instr& operator[](Slot s) const { return slot[static_cast<int>(s)]; }
  friend bool operator==(const Bundle&, const Bundle&) = default;
};

inline constexpr int kBundleBytes = kNumSlots * 8;
inline constexpr int kRegFieldMax = 63;

uint64_t encode(const Instr& in);
// Throws tessera::Error naming `slot` when the word is not a valid instruction for that slot.
Instr decode(uint64_t word, Slot slot);

}  // namespace tessera::isa
