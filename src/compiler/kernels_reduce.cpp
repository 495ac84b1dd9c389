// Reductions and data movement on the vector unit and the reduce/permute unit:
//   * reduce_rows = numerics::column_sum: whole vregs of S rows accumulate (sublane s holds rows
//     s, s+S, ... ascending from +0), then the S partials combine by the pairwise tree, done with
//     strided loads that pair sublanes (2i, 2i+1) level by level through vector memory;
//   * softmax cross-entropy and its gradient, row by row on the RPU (rmax, rsum: the lane tree of
//     numerics/reduce.h; -Inf / +0 padding lanes leave the tree's value unchanged) and the EUP
//     (exp, log, rcp), labels broadcast across lanes by a permute;
#include <bit>
#include <limits>

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels.h"

namespace tessera::compiler {

using isa::Opcode;

int sublane_tree_sum(Codegen& cg, int acc, int64_t tmp) {
  int cur = acc;
  for (int h = cg.spec().sublanes; h > 1; h /= 2) {
    cg.vst(cur, tmp);
    const int a = cg.vreg(), b = cg.vreg(), r = cg.vreg();
    cg.vld_strided(a, tmp, kRegStride2, 2);
    cg.vld_strided(b, tmp + 1, kRegStride2, 2);
    cg.op(Opcode::VADDF, r, a, b);
    cur = r;
  }
  return cur;
}

namespace {

void check_sublanes(const core::CoreSpec& spec) {
  if (std::popcount(static_cast<unsigned>(spec.sublanes)) != 1)
    throw Error("compiler", "the sublane count must be a power of two");
}

}  // namespace

namespace {

// What each row adds in reduce_rows' order: the row itself, or with `centre` (the HBM address of
// a [cols] vector) (x - centre)^2, or with `with` too (u [rows, cols] in HBM) u * (x - centre).
struct RowTerm {
  int64_t centre = -1;
  int64_t with = -1;
};

// The centre's vreg (v1: a constant register, out of the rotating pool) and the sign bit's (v2).
constexpr int kCentreReg = 1, kNegZeroReg = 2;

void reduce_rows_of(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t rows,
                    int64_t cols, const RowTerm& term) {
  const core::CoreSpec& spec = cg.spec();
  check_sublanes(spec);
  const bool centred = term.centre >= 0, dot = term.with >= 0;
  const int64_t S = spec.sublanes, lanes = spec.lanes, nb = ceil_div(cols, lanes);
  const int64_t inputs = dot ? 2 : 1;
  const int64_t acc_base = 0, out_base = nb * S, tmp = out_base + nb + S;
  const int64_t centre_base = tmp + 2 * S, x_base = centre_base + (centred ? nb + S : 0);
  // slack for strided reads past each buffer
  const int64_t avail = spec.vmem_rows() - x_base - inputs * S * nb;
  const int64_t rc = (avail / (inputs * S * nb)) * S;  // rows per chunk, a multiple of S
  if (rc < S)
    throw Error("compiler", "tensor '" + name + "': " + std::to_string(S) + " rows of " +
                                std::to_string(cols) + " columns do not fit vector memory (" +
                                std::to_string(spec.vmem_rows()) + " rows)");
  const int64_t u_base = x_base + rc * nb + S * nb;
  cg.sli(kRegStride, nb);
  cg.sli(kRegStride2, 2);
  cg.op(Opcode::VBCASTI, 0, 0, 0, 0, 0);
  for (int64_t j = 0; j < nb; ++j) cg.vst(0, acc_base + j * S);
  if (centred) {  // the centre's nb rows; m1 = sublane 0 (the padding rows' masked stores)
    cg.dma(Opcode::DMAHV, centre_base * lanes, term.centre, cols);
    cg.wait_dmas();
    const int sub = cg.vreg();
    cg.op(Opcode::VSUBLANEID, sub);
    cg.op(Opcode::VCMPEQI, 1, sub, 0);
    cg.op(Opcode::VBCASTI, kNegZeroReg, 0, 0, 0, static_cast<int32_t>(0x80000000u));
  }
  for (int64_t r0 = 0; r0 < rows; r0 += rc) {
    const int64_t nr = std::min(rc, rows - r0), groups = ceil_div(nr, S);
    // Rows past the end add +0: zero rows, or for a term x rows equal to the centre (so that
    // (x - centre) is +0) and u rows of -0 (so that u * (x - centre) is -0, which leaves every
    // partial sum as it is).
    for (int64_t r = nr; r < groups * S; ++r)
      for (int64_t j = 0; j < nb; ++j) {
        const int64_t row = x_base + r * nb + j;
        if (!centred) {
          cg.vst(0, row);
          continue;
        }
        cg.vld(kCentreReg, centre_base + j);
        cg.op_rows(Opcode::VSTM, 0, kCentreReg, kRegZero, 1, static_cast<int32_t>(row), row, row);
        if (dot) cg.vst(kNegZeroReg, u_base + r * nb + j);
      }
    cg.em().barrier();
    cg.dma(Opcode::DMAHV2, x_base * lanes, x + r0 * cols,
           cg.descriptor(nr, cols, cols, nb * lanes));
    if (dot)
      cg.dma(Opcode::DMAHV2, u_base * lanes, term.with + r0 * cols,
             cg.descriptor(nr, cols, cols, nb * lanes));
    cg.wait_dmas();
    for (int64_t j = 0; j < nb; ++j) {
      int acc = cg.vreg();
      cg.vld(acc, acc_base + j * S);
      if (centred)  // block j of the centre in every sublane
        cg.vld_strided(kCentreReg, centre_base + j, kRegZero, 0);
      for (int64_t g = 0; g < groups; ++g) {
        int v = cg.vreg();
        cg.vld_strided(v, x_base + g * S * nb + j, kRegStride, static_cast<int>(nb));
        if (centred) {
          const int t = cg.vreg(), p = cg.vreg();
          cg.op(Opcode::VSUBF, t, v, kCentreReg);
          if (dot) {
            const int w = cg.vreg();
            cg.vld_strided(w, u_base + g * S * nb + j, kRegStride, static_cast<int>(nb));
            cg.op(Opcode::VMULF, p, w, t);
          } else {
            cg.op(Opcode::VMULF, p, t, t);
          }
          v = p;
        }
        const int s = cg.vreg();
        cg.op(Opcode::VADDF, s, acc, v);
        acc = s;
      }
      cg.vst(acc, acc_base + j * S);
    }
    cg.em().barrier();
  }
  for (int64_t j = 0; j < nb; ++j) {
    const int a = cg.vreg();
    cg.vld(a, acc_base + j * S);
    cg.vst(sublane_tree_sum(cg, a, tmp), out_base + j);
  }
  cg.em().barrier();
  cg.dma(Opcode::DMAVH, out, out_base * lanes, cols);
  cg.wait_dmas();
}

}  // namespace

void emit_reduce_rows(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t rows,
                      int64_t cols) {
  reduce_rows_of(cg, name, x, out, rows, cols, {});
}

void emit_channel_sum(Codegen& cg, const std::string& name, int64_t x, int64_t u, int64_t centre,
                      int64_t out, int64_t rows, int64_t cols) {
  reduce_rows_of(cg, name, x, out, rows, cols, RowTerm{centre, u});
}

void emit_softmax_xent(Codegen& cg, const std::string& name, int64_t logits, int64_t labels,
                       int64_t loss, int64_t grad, int64_t batch, int64_t classes) {
  const core::CoreSpec& spec = cg.spec();
  check_sublanes(spec);
  const int64_t S = spec.sublanes, lanes = spec.lanes;
  if (classes > lanes)
    throw Error("compiler", "tensor '" + name + "': " + std::to_string(classes) +
                                " classes exceed the " + std::to_string(lanes) +
                                " lanes of a vector row");
  const float inv_b = 1.0f / static_cast<float>(batch);
  const int64_t tmp = 0, base = 2 * S;
  const int64_t rc = ((spec.vmem_rows() - base) / 3 / S) * S;  // logits, labels, gradient rows
  if (rc < S)
    throw Error("compiler", "tensor '" + name + "': vector memory too small for one row group");
  const int64_t lab_base = base + rc, out_base = base + 2 * rc;
  cg.sli(kRegStride2, 2);
  cg.op(Opcode::VBCASTI, 0, 0, 0, 0, 0);
  cg.op(Opcode::VLANEID, 1);
  cg.op(Opcode::VBCASTI, 3, 0, 0, 0, 0);  // per-sublane loss sums
  cg.op(Opcode::VBCASTI, 4, 0, 0, 0, bits(1.0f));
  cg.op(Opcode::VBCASTI, 5, 0, 0, 0, bits(inv_b));
  cg.op(Opcode::VBCASTI, 6, 0, 0, 0, bits(-std::numeric_limits<float>::infinity()));
  cg.op(Opcode::VSUBLANEID, 7);
  for (int64_t r0 = 0; r0 < batch; r0 += rc) {
    const int64_t nr = std::min(rc, batch - r0), groups = ceil_div(nr, S);
    for (int64_t g = 0; g < groups; ++g) cg.vst(6, base + g * S);
    cg.em().barrier();
    cg.dma(Opcode::DMAHV2, base * lanes, logits + r0 * classes,
           cg.descriptor(nr, classes, classes, lanes));
    cg.dma(Opcode::DMAHV2, lab_base * lanes, labels + r0, cg.descriptor(nr, 1, 1, lanes));
    cg.wait_dmas();
    for (int64_t g = 0; g < groups; ++g) {
      const int x = cg.vreg(), m = cg.vreg(), d = cg.vreg(), e = cg.vreg(), s = cg.vreg(),
                lab = cg.vreg(), lb = cg.vreg();
      cg.vld(x, base + g * S);
      cg.op(Opcode::RMAX, 0, x);
      cg.op(Opcode::RPOP, m);
      cg.op(Opcode::VSUBF, d, x, m);
      cg.op(Opcode::EEXP, 0, d);
      cg.op(Opcode::EPOP, e);
      cg.op(Opcode::RSUM, 0, e);
      cg.op(Opcode::RPOP, s);
      cg.vld(lab, lab_base + g * S);
      cg.op(Opcode::RPERM, 0, lab, 0);
      cg.op(Opcode::RPOP, lb);
      cg.op(Opcode::VCMPEQI, 1, lb, 1);  // m1 = lane == label
      if (loss >= 0) {
        const int ls = cg.vreg(), dsel = cg.vreg(), dl = cg.vreg(), lossb = cg.vreg();
        cg.op(Opcode::ELOG, 0, s);
        cg.op(Opcode::EPOP, ls);
        cg.op(Opcode::VSEL, dsel, d, 0, 1);
        cg.op(Opcode::RSUM, 0, dsel);
        cg.op(Opcode::RPOP, dl);
        cg.op(Opcode::VSUBF, lossb, ls, dl);
        const int64_t valid = nr - g * S;
        int add = lossb;
        if (valid < S) {
          const int lim = cg.vreg(), masked = cg.vreg();
          cg.op(Opcode::VBCASTI, lim, 0, 0, 0, static_cast<int32_t>(valid));
          cg.op(Opcode::VCMPLTI, 2, 7, lim);
          cg.op(Opcode::VSEL, masked, lossb, 0, 2);
          add = masked;
        }
        cg.op(Opcode::VADDF, 3, 3, add);
      }
      if (grad >= 0) {
        const int r = cg.vreg(), p = cg.vreg(), oh = cg.vreg(), df = cg.vreg(), dd = cg.vreg();
        cg.op(Opcode::ERCP, 0, s);
        cg.op(Opcode::EPOP, r);
        cg.op(Opcode::VMULF, p, e, r);
        cg.op(Opcode::VSEL, oh, 4, 0, 1);
        cg.op(Opcode::VSUBF, df, p, oh);
        cg.op(Opcode::VMULF, dd, df, 5);
        cg.vst(dd, out_base + g * S);
      }
    }
    cg.em().barrier();
    if (grad >= 0) {
      cg.dma(Opcode::DMAVH2, grad + r0 * classes, out_base * lanes,
             cg.descriptor(nr, classes, lanes, classes));
      cg.wait_dmas();
    }
  }
  if (loss >= 0) {
    const int total = sublane_tree_sum(cg, 3, tmp), l = cg.vreg();
    cg.op(Opcode::VMULF, l, total, 5);
    cg.vst(l, tmp);
    cg.em().barrier();
    cg.dma(Opcode::DMAVH, loss, tmp * lanes, 1);
    cg.wait_dmas();
  }
}

}  // namespace tessera::compiler
