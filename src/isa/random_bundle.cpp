#include "isa/random_bundle.h"

#include <algorithm>
#include <array>
#include <vector>

#include "common/error.h"
#include "isa/operands.h"

namespace tessera::isa {
namespace {

constexpr int kMaxTries = 8;

// Ops (other than nop) per slot class, in table order.
const std::array<std::vector<Opcode>, kNumSlotClasses>& ops_by_class() {
  static const auto table = [] {
    std::array<std::vector<Opcode>, kNumSlotClasses> t;
    for (const auto& info : kOpTable) {
      if (info.op != Opcode::NOP) t[static_cast<int>(info.slot)].push_back(info.op);
    }
    return t;
  }();
  return table;
}

bool conflicts(const Instr& in, const std::vector<RegRef>& written) {
  for (const RegRef& r : written_registers(in)) {
    if (std::find(written.begin(), written.end(), r) != written.end()) return true;
  }
  return false;
}

}  // namespace

RandomBundleGenerator::RandomBundleGenerator(uint64_t seed, RandomBundleOptions options)
    : m_opt(options), m_stream(seed) {
  TESSERA_CHECK(options.scalar_regs >= 1 && options.scalar_regs <= 64 && options.vector_regs >= 1 &&
                    options.vector_regs <= 64 && options.mask_regs >= 1 && options.mask_regs <= 64,
                "register counts must be 1..64");
  TESSERA_CHECK(options.max_target >= 0, "max_target must be non-negative");
}

uint64_t RandomBundleGenerator::next_u64() {
  return m_stream.next();
}

uint64_t RandomBundleGenerator::below(uint64_t n) {
  return next_u64() % n;
}

uint8_t RandomBundleGenerator::reg(OperandKind kind) {
  int count = kind == OperandKind::VReg   ? m_opt.vector_regs
              : kind == OperandKind::MReg ? m_opt.mask_regs
                                          : m_opt.scalar_regs;
  return static_cast<uint8_t>(below(count));
}

Instr RandomBundleGenerator::instr_for(Slot slot) {
  const auto& ops = ops_by_class()[static_cast<int>(kSlotClass[static_cast<int>(slot)])];
  Instr in;
  in.op = ops[below(ops.size())];
  if (in.op == Opcode::HALT && !m_opt.allow_halt) return {};
  for (const Operand& o : signature(in.op)) {
    switch (o.kind) {
      case OperandKind::SReg:
      case OperandKind::VReg:
      case OperandKind::MReg:
        set_field(in, o.field, reg(o.kind));
        break;
      case OperandKind::Mem:
        set_field(in, o.field, reg(OperandKind::SReg));
        [[fallthrough]];
      case OperandKind::Imm:
        in.imm =
            below(2) ? static_cast<int32_t>(below(201)) - 100 : static_cast<int32_t>(next_u64());
        break;
      case OperandKind::Label:
        in.imm = static_cast<int32_t>(below(static_cast<uint64_t>(m_opt.max_target) + 1));
        break;
      case OperandKind::Special:
        in.imm = static_cast<int32_t>(below(kNumSpecialRegs));
        break;
      case OperandKind::Flag:
        set_field(in, o.field, static_cast<uint8_t>(below(kMaxFlagId + 1)));
        break;
      case OperandKind::Mxu:
        if (m_opt.mxus > 1)
          set_field(in, o.field, static_cast<uint8_t>(below(static_cast<uint64_t>(m_opt.mxus))));
        break;
    }
  }
  return in;
}

// Per slot class, the number of ops is drawn first and they fill the lowest slots of the class
// (the canonical placement); an op that would write an already-written register is redrawn.
Bundle RandomBundleGenerator::next() {
  Bundle b;
  std::vector<RegRef> written;
  std::array<bool, kNumSlotClasses> class_done{};
  for (int s = 0; s < kNumSlots; ++s) {
    int cls = static_cast<int>(kSlotClass[s]);
    if (class_done[cls]) continue;
    if (static_cast<int>(below(100)) >= m_opt.fill_percent) {
      class_done[cls] = true;
      continue;
    }
    for (int tries = 0; tries < kMaxTries; ++tries) {
      Instr in = instr_for(static_cast<Slot>(s));
      if (in.op == Opcode::NOP || conflicts(in, written)) continue;
      for (const RegRef& r : written_registers(in)) written.push_back(r);
      b.slot[s] = in;
      break;
    }
    if (b.slot[s].op == Opcode::NOP) class_done[cls] = true;
  }
  return b;
}

Program random_program(uint64_t seed, int bundles, RandomBundleOptions options) {
  options.max_target = bundles;
  RandomBundleGenerator gen(seed, options);
  Program p;
  for (int i = 0; i < bundles; ++i) p.code.push_back(gen.next());
  int segments = static_cast<int>(gen.below(4));
  for (int i = 0; i < segments; ++i) {
    DataSegment s{static_cast<Space>(gen.below(kNumSpaces)), gen.below(1 << 20), {}};
    int words = 1 + static_cast<int>(gen.below(20));
    for (int k = 0; k < words; ++k) s.words.push_back(static_cast<uint32_t>(gen.next_u64()));
    p.data.push_back(std::move(s));
  }
  return p;
}

}  // namespace tessera::isa
