#include "compiler/kernels_adagrad.h"

namespace tessera::compiler {

using isa::Opcode;

AdagradUpdate emit_adagrad_update(const VectorCode& out, int neg_clr, int eps, int theta, int sum,
                                  int g) {
  const int gg = out.fresh(), s = out.fresh(), sq = out.fresh(), den = out.fresh();
  out.op(Opcode::VMULF, gg, g, g, 0);
  out.op(Opcode::VADDF, s, sum, gg, 0);
  out.op(Opcode::ESQRT, 0, s, 0, 0);
  out.op(Opcode::EPOP, sq, 0, 0, 0);
  out.op(Opcode::VADDF, den, sq, eps, 0);
  const int r = emit_divide(out, g, den, -1);
  const int u = out.fresh(), th = out.fresh();
  out.op(Opcode::VMULF, u, neg_clr, r, 0);
  out.op(Opcode::VADDF, th, theta, u, 0);
  return AdagradUpdate{th, s};
}

void emit_adagrad(Codegen& cg, const std::string& name, int64_t theta, int64_t sum, int64_t grad,
                  int64_t n, float eps, int64_t scalars) {
  // clr broadcast to a whole vreg at the top of vector memory.
  const int64_t top = cg.spec().vmem_rows() - cg.spec().sublanes;
  cg.dma(Opcode::DMAHV2, top * cg.spec().lanes, scalars,
         cg.descriptor(cg.words_per_vreg(), 1, 0, 1));
  cg.wait_dmas();
  emit_stream(
      cg, name, n, 1, {{theta, false}, {sum, false}, {grad, false}}, {theta, sum},
      [](Codegen& c, const std::vector<int>& in) {
        const AdagradUpdate u = emit_adagrad_update(scheduled(c), 1, 0, in[0], in[1], in[2]);
        return std::vector<int>{u.theta, u.sum};
      },
      [=](Codegen& c) {
        c.op(Opcode::VBCASTI, 0, 0, 0, 0, bits(eps));
        c.vld(2, top);              // clr
        c.op(Opcode::VNEGF, 1, 2);  // -clr
      },
      cg.spec().sublanes);
}

}  // namespace tessera::compiler
