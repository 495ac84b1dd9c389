#include "isa/operands.h"

#include <array>
#include <string>
#include <vector>

#include "common/error.h"

namespace tessera::isa {
namespace {

Field parse_field(char c, std::string_view sig) {
  switch (c) {
    case 'D':
      return Field::D;
    case 'A':
      return Field::A;
    case 'B':
      return Field::B;
    case 'C':
      return Field::C;
    default:
      break;
  }
  throw Error("opcodes.def", fmt::format("bad field letter '{}' in signature \"{}\"", c, sig));
}

Operand parse_operand(std::string_view t, std::string_view sig) {
  if (t == "imm") return {OperandKind::Imm};
  if (t == "label") return {OperandKind::Label};
  if (t == "sr") return {OperandKind::Special};
  if (t.size() == 2 && t[0] == '#') return {OperandKind::Flag, parse_field(t[1], sig)};
  if (t.size() == 2 && t[0] == 'u') return {OperandKind::Mxu, parse_field(t[1], sig)};
  if (t.size() == 2 && (t[0] == 's' || t[0] == 'v' || t[0] == 'm')) {
    OperandKind k = t[0] == 's'   ? OperandKind::SReg
                    : t[0] == 'v' ? OperandKind::VReg
                                  : OperandKind::MReg;
    return {k, parse_field(t[1], sig)};
  }
  if (t.size() == 8 && t.substr(0, 2) == "[s" && t.substr(3) == "+imm]") {
    return {OperandKind::Mem, parse_field(t[2], sig)};
  }
  throw Error("opcodes.def", fmt::format("bad operand '{}' in signature \"{}\"", t, sig));
}

std::vector<Operand> parse_signature(std::string_view sig) {
  std::vector<Operand> out;
  size_t pos = 0;
  while (pos < sig.size()) {
    size_t comma = sig.find(',', pos);
    if (comma == std::string_view::npos) comma = sig.size();
    if (!out.empty() && out.back().kind == OperandKind::Mxu)
      throw Error("opcodes.def",
                  fmt::format("the MXU index must be the last operand in \"{}\"", sig));
    out.push_back(parse_operand(sig.substr(pos, comma - pos), sig));
    pos = comma + 1;
  }
  return out;
}

struct SignatureTable {
  std::array<std::vector<Operand>, kNumOpcodes> ops;
  std::array<bool, kNumOpcodes> imm{};
  std::array<std::array<bool, kNumFields>, kNumOpcodes> fields{};

  SignatureTable() {
    for (const auto& info : kOpTable) {
      int i = static_cast<int>(info.op);
      ops[i] = parse_signature(info.operands);
      for (const Operand& o : ops[i]) {
        bool in_imm = o.kind == OperandKind::Imm || o.kind == OperandKind::Label ||
                      o.kind == OperandKind::Mem || o.kind == OperandKind::Special;
        bool in_field = is_register(o.kind) || o.kind == OperandKind::Mem ||
                        o.kind == OperandKind::Flag || o.kind == OperandKind::Mxu;
        if (in_imm) imm[i] = true;
        if (in_field) fields[i][static_cast<int>(o.field)] = true;
      }
    }
  }
};

const SignatureTable& table() {
  static const SignatureTable t;
  return t;
}

void add(RegList& list, RegRef r) {
  for (const RegRef& x : list) {
    if (x == r) return;
  }
  list.reg[list.count++] = r;
}

bool is_destination(const Instr& in, const Operand& o) {
  return is_register(o.kind) && o.field == Field::D && op_info(in.op).unit != Unit::Dma;
}

}  // namespace

std::span<const Operand> signature(Opcode op) {
  return table().ops[static_cast<int>(op)];
}
bool uses_imm(Opcode op) {
  return table().imm[static_cast<int>(op)];
}
bool uses_field(Opcode op, Field f) {
  return table().fields[static_cast<int>(op)][static_cast<int>(f)];
}

uint8_t field_value(const Instr& in, Field f) {
  switch (f) {
    case Field::D:
      return in.d;
    case Field::A:
      return in.a;
    case Field::B:
      return in.b;
    case Field::C:
      return in.c;
  }
  return 0;
}

void set_field(Instr& in, Field f, uint8_t value) {
  switch (f) {
    case Field::D:
      in.d = value;
      break;
    case Field::A:
      in.a = value;
      break;
    case Field::B:
      in.b = value;
      break;
    case Field::C:
      in.c = value;
      break;
  }
}

char field_letter(Field f) {
  return "dabc"[static_cast<int>(f)];
}

RegFile reg_file(OperandKind k) {
  switch (k) {
    case OperandKind::VReg:
      return RegFile::Vector;
    case OperandKind::MReg:
      return RegFile::Mask;
    default:
      return RegFile::Scalar;
  }
}

bool is_register(OperandKind k) {
  return k == OperandKind::SReg || k == OperandKind::VReg || k == OperandKind::MReg;
}

std::string_view reg_prefix(RegFile f) {
  switch (f) {
    case RegFile::Scalar:
      return "s";
    case RegFile::Vector:
      return "v";
    case RegFile::Mask:
      return "m";
  }
  return "?";
}

RegList written_registers(const Instr& in) {
  RegList out;
  for (const Operand& o : signature(in.op)) {
    if (is_destination(in, o)) add(out, {reg_file(o.kind), field_value(in, o.field)});
  }
  if (in.op == Opcode::LOOP) add(out, {RegFile::Scalar, in.a});
  return out;
}

RegList read_registers(const Instr& in) {
  RegList out;
  for (const Operand& o : signature(in.op)) {
    bool reg = is_register(o.kind) || o.kind == OperandKind::Mem;
    if (reg && !is_destination(in, o)) add(out, {reg_file(o.kind), field_value(in, o.field)});
  }
  return out;
}

}  // namespace tessera::isa
