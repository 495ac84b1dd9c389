#include "core/decoded.h"

#include <fmt/format.h>

#include "isa/disassembler.h"

namespace tessera::core {

namespace {

using isa::Field;
using isa::OperandKind;
using isa::RegFile;

int reg_count(const CoreSpec& spec, RegFile f) {
  switch (f) {
    case RegFile::Scalar:
      return spec.scalar_regs;
    case RegFile::Vector:
      return spec.vector_regs;
    case RegFile::Mask:
      return spec.mask_regs;
  }
  return 0;
}

// Checks the operands of `in` against the configuration; returns "" or the reason.
std::string check_operands(const isa::Instr& in, const CoreSpec& spec) {
  for (const isa::Operand& o : isa::signature(in.op)) {
    const uint8_t v = isa::field_value(in, o.field);
    if (isa::is_register(o.kind) || o.kind == OperandKind::Mem) {
      const RegFile f = isa::reg_file(o.kind);
      if (v >= reg_count(spec, f))
        return fmt::format("{}: register {}{} does not exist (this configuration has {})",
                           isa::op_info(in.op).mnemonic, isa::reg_prefix(f), v, reg_count(spec, f));
    } else if (o.kind == OperandKind::Flag && in.op == isa::Opcode::DMAVHSC) {
      if (v >= spec.sparse.flags)
        return fmt::format("{}: sparse-core flag {} does not exist (this configuration has {})",
                           isa::op_info(in.op).mnemonic, v, spec.sparse.flags);
    } else if (o.kind == OperandKind::Flag) {
      if (v >= spec.sync_flags)
        return fmt::format("{}: sync flag {} does not exist (this configuration has {})",
                           isa::op_info(in.op).mnemonic, v, spec.sync_flags);
    } else if (o.kind == OperandKind::Mxu) {
      if (v >= spec.mxu_count)
        return fmt::format("{}: MXU {} does not exist (this configuration has {})",
                           isa::op_info(in.op).mnemonic, v, spec.mxu_count);
    } else if (o.kind == OperandKind::Special) {
      if (in.imm < 0 || in.imm >= isa::kNumSpecialRegs)
        return fmt::format("{}: special register {} does not exist", isa::op_info(in.op).mnemonic,
                           in.imm);
    }
  }
  return "";
}

bool is_pure_destination(const isa::Instr& in, const isa::Operand& o) {
  return isa::is_register(o.kind) && o.field == Field::D &&
         isa::op_info(in.op).unit != isa::Unit::Dma;
}

void set_op_field(DecodedOp& op, Field f, uint8_t v) {
  switch (f) {
    case Field::D:
      op.d = v;
      break;
    case Field::A:
      op.a = v;
      break;
    case Field::B:
      op.b = v;
      break;
    case Field::C:
      op.c = v;
      break;
  }
}

struct WrittenSet {
  isa::RegRef regs[isa::kNumSlots * 2];
  int count = 0;
  bool contains(isa::RegRef r) const {
    for (int i = 0; i < count; ++i)
      if (regs[i] == r) return true;
    return false;
  }
};

// Redirects reads of registers written by earlier slots to shadow copies.
void rewrite_reads(const isa::Instr& in, DecodedOp& op, const WrittenSet& written, DecodedBundle& b,
                   const CoreSpec& spec) {
  for (const isa::Operand& o : isa::signature(in.op)) {
    if (!(isa::is_register(o.kind) || o.kind == OperandKind::Mem) || is_pure_destination(in, o))
      continue;
    const isa::RegRef r{isa::reg_file(o.kind), isa::field_value(in, o.field)};
    if (!written.contains(r)) continue;
    uint8_t shadow = 0;
    bool found = false;
    int same_file = 0;
    for (int i = 0; i < b.n_copies; ++i) {
      if (b.copies[i].file != r.file) continue;
      ++same_file;
      if (b.copies[i].from == r.index) shadow = b.copies[i].to, found = true;
    }
    if (!found) {
      shadow = static_cast<uint8_t>(reg_count(spec, r.file) + same_file);
      b.copies[b.n_copies++] = ShadowCopy{r.file, r.index, shadow};
    }
    set_op_field(op, o.field, shadow);
  }
}

void add_src(DecodedBundle& b, isa::RegRef r) {
  for (int i = 0; i < b.n_srcs; ++i)
    if (b.srcs[i] == r) return;
  b.srcs[b.n_srcs++] = r;
}

DecodedBundle decode_bundle(const isa::Bundle& bundle, const CoreSpec& spec, DecodedProgram& prog) {
  DecodedBundle b;
  WrittenSet written;
  for (int s = 0; s < isa::kNumSlots; ++s) {
    const isa::Instr& in = bundle.slot[s];
    if (in.op == isa::Opcode::NOP) continue;
    if (std::string why = check_operands(in, spec); !why.empty()) {
      b.fault = static_cast<int32_t>(prog.faults.size());
      prog.faults.push_back(fmt::format("slot {}: {}", isa::kSlotName[s], why));
      return b;
    }
    DecodedOp op;
    op.op = in.op;
    op.unit = isa::op_info(in.op).unit;
    op.slot = static_cast<uint8_t>(s);
    op.d = in.d, op.a = in.a, op.b = in.b, op.c = in.c;
    op.imm = in.imm;
    const isa::RegList reads = isa::read_registers(in);
    for (const isa::RegRef& r : reads.view()) {
      add_src(b, r);
      if (r.file != RegFile::Scalar) ++op.vreg_reads;
    }
    rewrite_reads(in, op, written, b, spec);
    const isa::RegList writes = isa::written_registers(in);
    if (writes.count > 0) {
      op.has_dest = true;
      op.dest = writes.reg[0];
      op.d = writes.reg[0].index;  // loop sA: writes through d, reads (maybe a shadow) through a
      for (const isa::RegRef& r : writes.view()) written.regs[written.count++] = r;
    }
    if (in.op == isa::Opcode::HALT) b.halts = true;
    b.ops[b.n_ops++] = op;
  }
  return b;
}

}  // namespace

DecodedProgram decode_program(std::span<const isa::Bundle> code, const CoreSpec& spec) {
  DecodedProgram p;
  p.code.assign(code.begin(), code.end());
  p.bundles.reserve(code.size());
  for (const isa::Bundle& b : code) p.bundles.push_back(decode_bundle(b, spec, p));
  return p;
}

std::string op_text(const isa::Instr& in) {
  return isa::disassemble(in);
}

std::string bundle_text(const isa::Bundle& b) {
  return isa::disassemble(b);
}

}  // namespace tessera::core
