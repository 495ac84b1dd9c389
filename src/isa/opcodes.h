// Opcodes, slots, units and latency classes of the tensor core's VLIW instruction set.
// The table itself is opcodes.def; this header turns it into an enum and a metadata array.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::isa {

enum class Opcode : uint8_t {
#define X(e, mn, slot, ops, unit, lat, summary) e,
#include "isa/opcodes.def"
#undef X
};

inline constexpr int kNumOpcodes = 0
#define X(e, mn, slot, ops, unit, lat, summary) +1
#include "isa/opcodes.def"
#undef X
    ;
static_assert(kNumOpcodes <= 256, "opcode must fit the 8-bit encoding field");

// Which kind of bundle slot an op may occupy.
enum class SlotClass : uint8_t { Any, Scalar, VecAlu, VecLoad, VecStore, Matrix, Ext, Misc };

// The bundle: 11 slots in this fixed order.
//   S0 S1 | V0 V1 | VLD | VST | M0 M1 | X0 X1 | MISC
enum class Slot : uint8_t { S0, S1, V0, V1, VLD, VST, M0, M1, X0, X1, MISC };
inline constexpr int kNumSlots = 11;
inline constexpr std::array<SlotClass, kNumSlots> kSlotClass = {
    SlotClass::Scalar,  SlotClass::Scalar,   SlotClass::VecAlu, SlotClass::VecAlu,
    SlotClass::VecLoad, SlotClass::VecStore, SlotClass::Matrix, SlotClass::Matrix,
    SlotClass::Ext,     SlotClass::Ext,      SlotClass::Misc};
inline constexpr std::array<std::string_view, kNumSlots> kSlotName = {
    "s0", "s1", "v0", "v1", "vld", "vst", "m0", "m1", "x0", "x1", "misc"};

// The functional unit that executes an op (for busy/utilisation statistics and traces).
enum class Unit : uint8_t { None, Scalar, Vector, VectorMem, Mxu, Xu, Rpu, Eup, Rng, Dma, Sync };
inline constexpr int kNumUnits = 11;

// Latency class: the config gives the cycles from issue to result for each class.
enum class LatencyClass : uint8_t {
  None,
  Scalar,
  ScalarMul,
  ScalarMem,
  Branch,
  VecAdd,
  VecMul,
  VecLoad,
  VecStore,
  Matrix,
  Transpose,
  Reduce,
  Eup,
  Rng,
  Dma,
  Sync
};
inline constexpr int kNumLatencyClasses = 16;

struct OpInfo {
  Opcode op;
  std::string_view mnemonic;
  SlotClass slot;
  std::string_view operands;  // signature, see opcodes.def
  Unit unit;
  LatencyClass latency;
  std::string_view summary;
};

inline constexpr std::array<OpInfo, kNumOpcodes> kOpTable = {{
#define X(e, mn, slot, ops, unit, lat, summary) \
  {Opcode::e, mn, SlotClass::slot, ops, Unit::unit, LatencyClass::lat, summary},
#include "isa/opcodes.def"
#undef X
}};

constexpr const OpInfo& op_info(Opcode op) {
  return kOpTable[static_cast<int>(op)];
}
std::optional<Opcode> opcode_from_mnemonic(std::string_view mnemonic);

std::string_view to_string(SlotClass c);
std::string_view to_string(Unit u);
std::string_view to_string(LatencyClass l);

// Special registers readable with smfsr / writable with smtsr.
enum class SpecialReg : uint8_t { CycleLo, CycleHi, Pid, NProc };
inline constexpr int kNumSpecialRegs = 4;
inline constexpr std::array<std::string_view, kNumSpecialRegs> kSpecialRegName = {
    "%cycle_lo", "%cycle_hi", "%pid", "%nproc"};

}  // namespace tessera::isa
