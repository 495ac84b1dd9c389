// reduce_max and reduce_max_grad (kernels_reduce_max.h). The gradient streams groups of x's rows
// with y's running copy (`left`, HBM between groups) and dy: v0 = +0, v1 = NaN; per row
// m1 = (row == left), grad = m1 ? dy : +0, left = m1 ? NaN : left.
#include "compiler/kernels_reduce_max.h"

#include <algorithm>
#include <limits>

#include "compiler/kernels.h"
#include "compiler/kernels_strided.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

// Rows per group of one gradient stream: a vreg position takes 2 + 3 * group of its buffers' and
// the body's registers, all live at once within the rotating pool (codegen.h: 24 of 32).
constexpr int64_t kGradGroup = 6;

}  // namespace

void emit_reduce_max(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                     const std::vector<int64_t>& big, const std::vector<int64_t>& small,
                     int64_t y) {
  emit_reduce_to(cg, scratch, name, x, big, small, y, Opcode::VMAXF,
                 bits(-std::numeric_limits<float>::infinity()));
}

void emit_reduce_max_grad(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t dy,
                          int64_t x, int64_t y, int64_t dx, const std::vector<int64_t>& big,
                          const std::vector<int64_t>& small) {
  int64_t at = 0;
  const ReducedRows r = arrange_reduced(cg, scratch, at, name, x, big, small);
  const int64_t left = scratch_take(scratch, at, r.K, name + ".left");
  const int64_t grads = r.gathered ? scratch_take(scratch, at, r.R * r.K, name + ".grads") : dx;
  for (int64_t r0 = 0; r0 < r.R; r0 += kGradGroup) {
    const int64_t n = std::min(kGradGroup, r.R - r0);
    std::vector<StreamIn> ins{{r0 == 0 ? y : left, false}, {dy, false}};
    std::vector<int64_t> outs{left};
    for (int64_t k = r0; k < r0 + n; ++k) {
      ins.push_back({r.rows + k * r.K, false});
      outs.push_back(grads + k * r.K);
    }
    emit_stream(
        cg, name, r.K, 1, ins, outs,
        [](Codegen& c, const std::vector<int>& in) {
          std::vector<int> out{in[0]};
          for (size_t i = 2; i < in.size(); ++i) {
            const int g = c.vreg(), l = c.vreg();
            c.op(Opcode::VCMPEQF, 1, in[i], out[0]);
            c.op(Opcode::VSEL, g, in[1], 0, 1);
            c.op(Opcode::VSEL, l, 1, out[0], 1);
            out[0] = l;
            out.push_back(g);
          }
          return out;
        },
        [](Codegen& c) {
          c.op(Opcode::VBCASTI, 0, 0, 0, 0, 0);
          c.op(Opcode::VBCASTI, 1, 0, 0, 0, bits(std::numeric_limits<float>::quiet_NaN()));
        });
  }
  if (r.gathered)
    emit_scatter(cg, name, grads, StridedView{dx, r.arranged.shape, r.arranged.strides});
}

}  // namespace tessera::compiler
