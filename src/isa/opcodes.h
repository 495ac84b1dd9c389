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

// Which kind of bundle slot an op may occupy (slot_classes.def).
enum class SlotClass : uint8_t {
#define X(e, name) e,
#include "isa/slot_classes.def"
#undef X
};
inline constexpr int kNumSlotClasses = 0
#define X(e, name) +1
#include "isa/slot_classes.def"
#undef X
    ;

// The bundle: its slots in this fixed order (slots.def).
enum class Slot : uint8_t {
#define X(e, cls, name) e,
#include "isa/slots.def"
#undef X
};
inline constexpr int kNumSlots = 0
#define X(e, cls, name) +1
#include "isa/slots.def"
#undef X
    ;
inline constexpr std::array<SlotClass, kNumSlots> kSlotClass = {
#define X(e, cls, name) SlotClass::cls,
#include "isa/slots.def"
#undef X
};
inline constexpr std::array<std::string_view, kNumSlots> kSlotName = {
#define X(e, cls, name) name,
#include "isa/slots.def"
#undef X
};

// The functional unit that executes an op (for busy/utilisation statistics and traces).
// The table is units.def.
enum class Unit : uint8_t {
#define X(e, name) e,
#include "isa/units.def"
#undef X
};
inline constexpr int kNumUnits = 0
#define X(e, name) +1
#include "isa/units.def"
#undef X
    ;

// Latency class: the config gives the cycles from issue to result for each class. The table is
// latency_classes.def.
enum class LatencyClass : uint8_t {
#define X(e, name) e,
#include "isa/latency_classes.def"
#undef X
};
inline constexpr int kNumLatencyClasses = 0
#define X(e, name) +1
#include "isa/latency_classes.def"
#undef X
    ;

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
