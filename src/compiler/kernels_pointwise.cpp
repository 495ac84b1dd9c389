// Element-wise transformer kernels (kernels_pointwise.h) on emit_stream. Constants live in
// v0..v7 (set once per chunk by the stream's setup).
#include "compiler/kernels_pointwise.h"

#include <cmath>

#include "compiler/kernels.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi), as the host's
// v0 = sqrt(2/pi), v1 = 0.044715, v2 = 0.5, v3 = 1, v4 = 3 * 0.044715 (f32)
constexpr int kC = 0, kK = 1, kHalf = 2, kOne = 3, kK3 = 4;

void gelu_constants(Codegen& c) {
  c.op(Opcode::VBCASTI, kC, 0, 0, 0, bits(static_cast<float>(kGeluC)));
  c.op(Opcode::VBCASTI, kK, 0, 0, 0, bits(static_cast<float>(0.044715)));
  c.op(Opcode::VBCASTI, kHalf, 0, 0, 0, bits(0.5f));
  c.op(Opcode::VBCASTI, kOne, 0, 0, 0, bits(1.0f));
  c.op(Opcode::VBCASTI, kK3, 0, 0, 0, bits(static_cast<float>(3 * 0.044715)));
}

int binary(Codegen& c, Opcode op, int a, int b) {
  const int r = c.vreg();
  c.op(op, r, a, b);
  return r;
}

// t = tanh(sqrt(2/pi) * (x + 0.044715 * ((x * x) * x))) on the EUP.
int gelu_tanh(Codegen& c, int x) {
  const int cube = binary(c, Opcode::VMULF, binary(c, Opcode::VMULF, x, x), x);
  const int u = binary(c, Opcode::VADDF, x, binary(c, Opcode::VMULF, kK, cube));
  const int t = c.vreg();
  c.op(Opcode::ETANH, 0, binary(c, Opcode::VMULF, kC, u));
  c.op(Opcode::EPOP, t);
  return t;
}

}  // namespace

void emit_gelu(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t n) {
  emit_stream(
      cg, name, n, 1, {{x, false}}, {y},
      [](Codegen& c, const std::vector<int>& in) {
        const int t = gelu_tanh(c, in[0]);
        const int hx = binary(c, Opcode::VMULF, kHalf, in[0]);
        return std::vector<int>{binary(c, Opcode::VMULF, hx, binary(c, Opcode::VADDF, kOne, t))};
      },
      gelu_constants);
}

void emit_gelu_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t dx,
                    int64_t n) {
  emit_stream(
      cg, name, n, 1, {{dy, false}, {x, false}}, {dx},
      [](Codegen& c, const std::vector<int>& in) {
        const int x_ = in[1];
        const int t = gelu_tanh(c, x_);
        // du = c * (1 + k3 * (x * x)); s = 1 - t * t
        const int k3xx = binary(c, Opcode::VMULF, kK3, binary(c, Opcode::VMULF, x_, x_));
        const int du = binary(c, Opcode::VMULF, kC, binary(c, Opcode::VADDF, kOne, k3xx));
        const int s = binary(c, Opcode::VSUBF, kOne, binary(c, Opcode::VMULF, t, t));
        // dx = dy * ((0.5 * (1 + t)) + (0.5 * x) * (s * du))
        const int left = binary(c, Opcode::VMULF, kHalf, binary(c, Opcode::VADDF, kOne, t));
        const int right = binary(c, Opcode::VMULF, binary(c, Opcode::VMULF, kHalf, x_),
                                 binary(c, Opcode::VMULF, s, du));
        return std::vector<int>{
            binary(c, Opcode::VMULF, in[0], binary(c, Opcode::VADDF, left, right))};
      },
      gelu_constants);
}

void emit_scale(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t n,
                double factor) {
  const float f = static_cast<float>(factor);
  emit_stream(
      cg, name, n, 1, {{x, false}}, {y},
      [](Codegen& c, const std::vector<int>& in) {
        return std::vector<int>{binary(c, Opcode::VMULF, in[0], 0)};
      },
      [f](Codegen& c) { c.op(Opcode::VBCASTI, 0, 0, 0, 0, bits(f)); });
}

void emit_dropout(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t n,
                  double rate, uint32_t seed) {
  const auto threshold = static_cast<uint64_t>(std::llround(rate * 0x1.0p32));
  const float f = static_cast<float>(1.0 / (1.0 - rate));
  // v0 = f, v1 = +0, v2 = the sign bit, v3 = threshold ^ sign bit: unsigned word >= threshold
  // is (word ^ sign) >= (threshold ^ sign) signed.
  const auto biased = static_cast<int32_t>(static_cast<uint32_t>(threshold) ^ 0x80000000u);
  const int s = cg.sreg();
  cg.sli(s, static_cast<int32_t>(seed));
  cg.op(Opcode::RNGSEED, 0, s);
  emit_stream(
      cg, name, n, 1, {{x, false}}, {y},
      [threshold](Codegen& c, const std::vector<int>& in) {
        const int kept = binary(c, Opcode::VMULF, in[0], 0);
        const int w = c.vreg();
        c.op(Opcode::RNG, w);
        if (threshold == 0) return std::vector<int>{kept};
        const int r = c.vreg();
        if (threshold > 0xffffffffu) {
          c.op(Opcode::VMOV, r, 1);
        } else {
          c.op(Opcode::VCMPLTI, 1, binary(c, Opcode::VXOR, w, 2), 3);  // m1 = dropped
          c.op(Opcode::VSEL, r, 1, kept, 1);
        }
        return std::vector<int>{r};
      },
      [f, biased](Codegen& c) {
        c.op(Opcode::VBCASTI, 0, 0, 0, 0, bits(f));
        c.op(Opcode::VBCASTI, 1, 0, 0, 0, 0);
        c.op(Opcode::VBCASTI, 2, 0, 0, 0, static_cast<int32_t>(0x80000000u));
        c.op(Opcode::VBCASTI, 3, 0, 0, 0, biased);
      });
}

void emit_copy(Codegen& cg, const std::string& name, int64_t src, int64_t dst, int64_t n) {
  emit_stream(cg, name, n, 1, {{src, false}}, {dst},
              [](Codegen&, const std::vector<int>& v) { return v; });
}

}  // namespace tessera::compiler
