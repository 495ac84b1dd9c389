// Seeded generator of valid bundles from the opcode table, for property tests and fuzzers.
//
// Every generated bundle decodes (isa::decode accepts each slot) and is canonical: the ops of a
// class occupy the lowest slots of that class, and no register is written twice, so
// assemble(disassemble(b)) reproduces it. Registers stay below the option's counts, branch
// targets in 0..max_target, special registers and flag ids in range, other immediates are any
// int32. The same seed gives the same bundles on every platform (no std distributions).
#pragma once

#include <cstdint>

#include "common/splitmix64.h"
#include "isa/image.h"
#include "isa/instruction.h"
#include "isa/operands.h"

namespace tessera::isa {

struct RandomBundleOptions {
  int scalar_regs = 32;
  int vector_regs = 32;
  int mask_regs = 8;
  int mxus = 1;            // MXU indices are drawn from 0..mxus-1 (none drawn for one MXU)
  int32_t max_target = 0;  // branch targets are drawn from 0..max_target
  int fill_percent = 50;   // chance that a slot holds an op
  bool allow_halt = true;
};

class RandomBundleGenerator {
 public:
  explicit RandomBundleGenerator(uint64_t seed, RandomBundleOptions options = {});
  Bundle next();
  Instr instr_for(Slot slot);  // one valid instruction for `slot` (may be nop)
  uint64_t next_u64();         // the underlying stream (common/splitmix64.h)
  uint64_t below(uint64_t n);  // uniform-ish in [0, n), n > 0

 private:
  uint8_t reg(OperandKind kind);
  RandomBundleOptions m_opt;
  SplitMix64 m_stream;
};

// A program of `bundles` random bundles (targets within the program) and a few data segments.
Program random_program(uint64_t seed, int bundles, RandomBundleOptions options = {});

}  // namespace tessera::isa
