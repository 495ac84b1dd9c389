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
  switch (c) {
    case SlotClass::Any:
      return "any";
    case SlotClass::Scalar:
      return "scalar";
    case SlotClass::VecAlu:
      return "vector-alu";
    case SlotClass::VecLoad:
      return "vector-load";
    case SlotClass::VecStore:
      return "vector-store";
    case SlotClass::Matrix:
      return "matrix";
    case SlotClass::Ext:
      return "extended";
    case SlotClass::Misc:
      return "misc";
  }
  return "?";
}

std::string_view to_string(Unit u) {
  static constexpr std::string_view names[kNumUnits] = {
      "none",           "scalar", "vector", "vector-memory", "mxu", "transpose",
      "reduce-permute", "eup",    "rng",    "dma",           "sync"};
  return names[static_cast<int>(u)];
}

std::string_view to_string(LatencyClass l) {
  static constexpr std::string_view names[kNumLatencyClasses] = {
      "none",       "scalar",      "scalar-mul",   "scalar-mem", "branch",    "vector-add",
      "vector-mul", "vector-load", "vector-store", "matrix",     "transpose", "reduce",
      "eup",        "rng",         "dma",          "sync"};
  return names[static_cast<int>(l)];
}

}  // namespace tessera::isa
