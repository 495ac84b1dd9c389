#include "isa/opcodes.h"

#include <string>
#include <unordered_map>

namespace tessera::isa {

std::optional<Opcode> opcode_from_mnemonic(std::string_view mnemonic) {
  static const std::unordered_map<std::string_view, Opcode> by_name = [] {
    std::unordered_map<std::string_view, Opcode> m;
    for (const auto& info : kOpTable) m.emplace(info.mnemonic, info.op);
    return m;
  }();
  auto it = by_name.find(mnemonic);
  if (it == by_name.end()) return std::nullopt;
  return it->second;
}

std::string_view to_string(SlotClass c) {
  static constexpr std::string_view names[kNumSlotClasses] = {
#define X(e, name) name,
#include "isa/slot_classes.def"
#undef X
  };
  return names[static_cast<int>(c)];
}

std::string_view to_string(Unit u) {
  static constexpr std::string_view names[kNumUnits] = {
#define X(e, name) name,
#include "isa/units.def"
#undef X
  };
  return names[static_cast<int>(u)];
}

std::string_view to_string(LatencyClass l) {
  static constexpr std::string_view names[kNumLatencyClasses] = {
#define X(e, name) name,
#include "isa/latency_classes.def"
#undef X
  };
  return names[static_cast<int>(l)];
}

}  // namespace tessera::isa
