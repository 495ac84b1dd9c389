// Element-wise math kernels (kernels_unary.h). Constants live in v0..v7 (set once per chunk by
// the stream's setup): v0 = 1; for erf v1 = p, v2..v6 = a5..a1, v7 = the sign bit.
#include "compiler/kernels_unary.h"

#include "common/error.h"
#include "compiler/kernels.h"
#include "graph/chip_unary.h"

namespace tessera::compiler {

using graph::OpKind;
using isa::Opcode;

namespace {

constexpr int kOne = 0, kP = 1, kA5 = 2, kSign = 7;

int unary(Codegen& c, Opcode op, int a) {
  const int r = c.vreg();
  c.op(op, r, a);
  return r;
}
int binary(Codegen& c, Opcode op, int a, int b) {
  const int r = c.vreg();
  c.op(op, r, a, b);
  return r;
}
int eup(Codegen& c, Opcode op, int a) {
  const int r = c.vreg();
  c.op(op, 0, a);
  c.op(Opcode::EPOP, r);
  return r;
}

Opcode eup_op(OpKind op) {
  switch (op) {
    case OpKind::kExp:
      return Opcode::EEXP;
    case OpKind::kLog:
      return Opcode::ELOG;
    case OpKind::kSqrt:
      return Opcode::ESQRT;
    case OpKind::kReciprocal:
      return Opcode::ERCP;
    case OpKind::kTanh:
      return Opcode::ETANH;
    default:
      TESSERA_CHECK(false, "emit_unary: op " + std::string(graph::op_name(op)) + " has no kernel");
      return Opcode::EEXP;
  }
}

// erf (graph/chip_unary.h): t = rcp(1 + p a), Horner's q, y = 1 - q exp(-(a a)), sign of x.
int erf_body(Codegen& c, int x) {
  const int a = unary(c, Opcode::VABSF, x);
  const int t =
      eup(c, Opcode::ERCP, binary(c, Opcode::VADDF, kOne, binary(c, Opcode::VMULF, kP, a)));
  int q = kA5;
  for (int i = 1; i <= 4; ++i)
    q = binary(c, Opcode::VADDF, binary(c, Opcode::VMULF, q, t), kA5 + i);
  q = binary(c, Opcode::VMULF, q, t);
  const int e = eup(c, Opcode::EEXP, unary(c, Opcode::VNEGF, binary(c, Opcode::VMULF, a, a)));
  const int y = binary(c, Opcode::VSUBF, kOne, binary(c, Opcode::VMULF, q, e));
  return binary(c, Opcode::VOR, unary(c, Opcode::VABSF, y), binary(c, Opcode::VAND, x, kSign));
}

void constants(Codegen& c, OpKind op) {
  c.op(Opcode::VBCASTI, kOne, 0, 0, 0, bits(1.0f));
  if (op != OpKind::kErf) return;
  c.op(Opcode::VBCASTI, kP, 0, 0, 0, bits(graph::kernels::kErfP));
  for (int i = 0; i < 5; ++i)  // v2 = a5 .. v6 = a1
    c.op(Opcode::VBCASTI, kA5 + i, 0, 0, 0,
         bits(graph::kernels::kErfA[static_cast<size_t>(4 - i)]));
  c.op(Opcode::VBCASTI, kSign, 0, 0, 0, static_cast<int32_t>(0x80000000u));
}

}  // namespace

void emit_unary(Codegen& cg, const std::string& name, OpKind op, int64_t x, int64_t y, int64_t n) {
  if (op != OpKind::kSigmoid && op != OpKind::kErf) eup_op(op);  // an op without a kernel: Error
  emit_stream(
      cg, name, n, 1, {{x, false}}, {y},
      [op](Codegen& c, const std::vector<int>& in) {
        switch (op) {
          case OpKind::kSigmoid: {
            const int e = eup(c, Opcode::EEXP, unary(c, Opcode::VNEGF, in[0]));
            return std::vector<int>{eup(c, Opcode::ERCP, binary(c, Opcode::VADDF, kOne, e))};
          }
          case OpKind::kErf:
            return std::vector<int>{erf_body(c, in[0])};
          default:
            return std::vector<int>{eup(c, eup_op(op), in[0])};
        }
      },
      [op](Codegen& c) { constants(c, op); });
}

}  // namespace tessera::compiler
