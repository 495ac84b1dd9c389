#include "isa/disassembler.h"

#include <functional>
#include <set>

#include <fmt/format.h>

#include "isa/operands.h"

namespace tessera::isa {
namespace {

using LabelName = std::function<std::string(int32_t)>;

constexpr int kWordsPerLine = 8;

std::string format_operand(const Instr& in, const Operand& o, const LabelName& label) {
  switch (o.kind) {
    case OperandKind::SReg:
    case OperandKind::VReg:
    case OperandKind::MReg:
      return fmt::format("{}{}", reg_prefix(reg_file(o.kind)), field_value(in, o.field));
    case OperandKind::Imm:
      return std::to_string(in.imm);
    case OperandKind::Label:
      return label(in.imm);
    case OperandKind::Mem: {
      unsigned base = field_value(in, o.field);
      if (in.imm == 0) return fmt::format("[s{}]", base);
      if (in.imm < 0) return fmt::format("[s{}-{}]", base, -static_cast<int64_t>(in.imm));
      return fmt::format("[s{}+{}]", base, in.imm);
    }
    case OperandKind::Special:
      if (in.imm >= 0 && in.imm < kNumSpecialRegs) return std::string(kSpecialRegName[in.imm]);
      return fmt::format("%invalid{}", in.imm);
    case OperandKind::Flag:
      return std::to_string(field_value(in, o.field));
    case OperandKind::Mxu:
      return fmt::format("mxu{}", field_value(in, o.field));
  }
  return "?";
}

std::string format_instr(const Instr& in, const LabelName& label) {
  std::string out(op_info(in.op).mnemonic);
  const char* sep = " ";
  for (const Operand& o : signature(in.op)) {
    if (o.kind == OperandKind::Mxu && field_value(in, o.field) == 0) break;  // MXU 0: implied
    out += sep;
    out += format_operand(in, o, label);
    sep = ", ";
  }
  return out;
}

std::string format_bundle(const Bundle& b, const LabelName& label) {
  std::string out;
  for (const Instr& in : b.slot) {
    if (in.op == Opcode::NOP) continue;
    if (!out.empty()) out += " ;; ";
    out += format_instr(in, label);
  }
  return out.empty() ? "nop" : out;
}

std::string index_label(int32_t target) {
  return std::to_string(target);
}

std::set<int32_t> branch_targets(const Program& p) {
  std::set<int32_t> targets;
  for (const Bundle& b : p.code) {
    for (const Instr& in : b.slot) {
      for (const Operand& o : signature(in.op)) {
        if (o.kind == OperandKind::Label && in.imm >= 0 &&
            static_cast<size_t>(in.imm) <= p.code.size()) {
          targets.insert(in.imm);
        }
      }
    }
  }
  return targets;
}

void append_data(std::string& out, const DataSegment& s) {
  out += fmt::format(".{} {}\n", to_string(s.space), s.address);
  for (size_t i = 0; i < s.words.size(); i += kWordsPerLine) {
    out += "  .word ";
    for (size_t k = i; k < s.words.size() && k < i + kWordsPerLine; ++k) {
      out += fmt::format("{}{:#010x}", k == i ? "" : ", ", s.words[k]);
    }
    out += '\n';
  }
}

}  // namespace

std::string disassemble(const Instr& in) {
  return format_instr(in, index_label);
}

std::string disassemble(const Bundle& b) {
  return format_bundle(b, index_label);
}

std::string disassemble(const Program& p) {
  std::set<int32_t> targets = branch_targets(p);
  LabelName label = [&](int32_t t) {
    return targets.count(t) ? fmt::format("L{}", t) : std::to_string(t);
  };
  std::string out = fmt::format("// {} bundles, {} data segments", p.code.size(), p.data.size());
  if (p.index != 0) out += fmt::format(", index word {} (not expressible in assembly)", p.index);
  out += '\n';
  for (const DataSegment& s : p.data) append_data(out, s);
  for (size_t i = 0; i < p.code.size(); ++i) {
    std::string prefix = targets.count(static_cast<int32_t>(i)) ? fmt::format("L{}:", i) : "";
    out += fmt::format("{:<7} {}\n", prefix, format_bundle(p.code[i], label));
  }
  if (targets.count(static_cast<int32_t>(p.code.size())))
    out += fmt::format("L{}:\n", p.code.size());
  return out;
}

}  // namespace tessera::isa
