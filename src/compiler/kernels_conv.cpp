// Convolutions as im2col + one GEMM (see kernels_conv.h for the formulation and K orders).
#include "compiler/kernels_conv.h"

#include <algorithm>

#include "common/error.h"
#include "compiler/kernels.h"
#include "compiler/kernels_line_dma.h"
#include "kernels/gemm.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

int64_t vmem_words(const Codegen& cg) {
  return cg.spec().vmem_rows() * cg.spec().lanes;
}

std::string sizes(int64_t words, const Codegen& cg) {
  return std::to_string(words) + " words; vector memory holds " + std::to_string(vmem_words(cg)) +
         " words";
}

// A [N, A, B, C] tensor at `src` copied into the zeroed [N, Ap, Bp, C] tensor at `dst`, element
// (a, b) to (a * da + oa, b * db + ob); positions outside [0, Ap) x [0, Bp) are dropped.
struct Placement {
  int64_t n, a, b, c, ap, bp, da, oa, db, ob;
};

void emit_place(Codegen& cg, const std::string& name, int64_t src, int64_t dst,
                const Placement& p) {
  const int64_t img = p.a * p.b * p.c;
  const int64_t per_chunk = vmem_words(cg) / img;
  if (per_chunk < 1)
    throw Error("compiler", "tensor '" + name + "': one image needs " + sizes(img, cg));
  auto in_range = [](int64_t i, int64_t d, int64_t o, int64_t lim) {
    return i * d + o >= 0 && i * d + o < lim;
  };
  const bool whole = p.da == 1 && p.db == 1 && in_range(0, 1, p.oa, p.ap) &&
                     in_range(p.a - 1, 1, p.oa, p.ap) && in_range(0, 1, p.ob, p.bp) &&
                     in_range(p.b - 1, 1, p.ob, p.bp);
  int64_t a_lo = 0, a_hi = p.a;  // rows a that land inside [0, Ap)
  while (a_lo < p.a && !in_range(a_lo, p.da, p.oa, p.ap)) ++a_lo;
  while (a_hi > a_lo && !in_range(a_hi - 1, p.da, p.oa, p.ap)) --a_hi;
  int64_t b0 = 0, b1 = p.b;
  while (b0 < p.b && !in_range(b0, p.db, p.ob, p.bp)) ++b0;
  while (b1 > b0 && !in_range(b1 - 1, p.db, p.ob, p.bp)) --b1;
  const int64_t out_img = p.ap * p.bp * p.c;
  for (int64_t n0 = 0; n0 < p.n; n0 += per_chunk) {
    const int64_t nn = std::min(per_chunk, p.n - n0);
    cg.dma(Opcode::DMAHV, 0, src + n0 * img, nn * img);
    cg.wait_dmas();
    if (whole) {
      const LineDmas d{Opcode::DMAVH2,
                       cg.descriptor(p.a, p.b * p.c, p.b * p.c, p.bp * p.c),
                       {dst + (p.oa * p.bp + p.ob) * p.c, out_img, 0},
                       {-n0 * img, img, 0}};
      emit_line_loops(cg, d, n0, nn, 0, 1);
    } else if (b0 < b1) {
      // Line (n, a): row a of image n, columns [b0, b1), to its dilated place.
      const LineDmas d{Opcode::DMAVH2,
                       cg.descriptor(b1 - b0, p.c, p.c, p.db * p.c),
                       {dst + (p.oa * p.bp + b0 * p.db + p.ob) * p.c, out_img, p.da * p.bp * p.c},
                       {b0 * p.c - n0 * img, img, p.b * p.c}};
      emit_line_loops(cg, d, n0, nn, a_lo, a_hi - a_lo);
    }
    cg.wait_dmas();
  }
}

// `images` matrices [rows, cols] row-major at vector-memory words v + i * v_step -> HBM: element
// (r, c) of matrix i to dst + i * dst_step + c * ld + r. One element-strided DMA per column or per
// row, whichever is fewer, in loops over the matrices and those.
void emit_scatter_transposed(Codegen& cg, int64_t v, int64_t v_step, int64_t dst, int64_t dst_step,
                             int64_t images, int64_t rows, int64_t cols, int64_t ld) {
  if (cols <= rows) {
    const LineDmas d{
        Opcode::DMAVH2, cg.descriptor(rows, 1, cols, 1), {dst, dst_step, ld}, {v, v_step, 1}};
    emit_line_loops(cg, d, 0, images, 0, cols);
  } else {
    const LineDmas d{
        Opcode::DMAVH2, cg.descriptor(cols, 1, 1, ld), {dst, dst_step, 1}, {v, v_step, cols}};
    emit_line_loops(cg, d, 0, images, 0, rows);
  }
}

// The DMAs that put the im2col rows of output lines (n, oh) into vector memory, row (n, oh, ow) at
// `row_words` words from the previous: per line and kernel row kh one 2-D DMA of OW runs of
// KW * C words from the (already padded) xp [N, Hp, Wp, C] at xp[n, oh * s + kh, ow * s]. The
// caller sets dst.base per chunk (its first line at word 0).
LineDmas im2col_row_dmas(Codegen& cg, const ConvGeom& g, int64_t xp, int64_t hp, int64_t wp,
                         int64_t c, int64_t s, int64_t row_words) {
  const int64_t run = int64_t{g.kw} * c;
  std::vector<std::array<int64_t, 2>> taps;
  for (int64_t kh = 0; kh < g.kh; ++kh) taps.push_back({kh * run, kh * wp * c});
  return {Opcode::DMAHV2,
          cg.descriptor(g.ow, run, s * c, row_words),
          {0, int64_t{g.oh} * g.ow * row_words, g.ow * row_words},
          {xp, hp * wp * c, s * wp * c},
          taps};
}

// The transposed im2col matrix cols_t[(kh, kw, c), (n, oh, ow)] = xp[n, oh * s + kh, ow * s + kw,
// c] of the (already padded) xp [N, Hp, Wp, C]: per chunk of lines (n, oh) the im2col rows are
// built in vector memory, one 2-D DMA per (line, kh), and scattered transposed to HBM.
void emit_im2col_transposed(Codegen& cg, const std::string& name, int64_t xp, int64_t cols_t,
                            const ConvGeom& g, int64_t hp, int64_t wp, int64_t c, int64_t s) {
  const int64_t K = int64_t{g.kh} * g.kw * c, line = int64_t{g.ow} * K, lines = int64_t{g.n} * g.oh;
  const int64_t per_chunk = vmem_words(cg) / line;
  if (per_chunk < 1)
    throw Error("compiler", "tensor '" + name + "': one im2col line (" + std::to_string(g.ow) +
                                " x " + std::to_string(K) + ") needs " + sizes(line, cg));
  LineDmas d = im2col_row_dmas(cg, g, xp, hp, wp, c, s, K);
  for (int64_t l0 = 0; l0 < lines; l0 += per_chunk) {
    const int64_t nl = std::min(per_chunk, lines - l0);
    d.dst.base = -l0 * line;
    emit_line_range(cg, d, l0, nl, g.oh);
    cg.touch_rows((nl * line + cg.spec().lanes - 1) / cg.spec().lanes);
    cg.wait_dmas();
    emit_scatter_transposed(cg, 0, 0, cols_t + l0 * g.ow, 0, 1, nl * g.ow, K, lines * g.ow);
    cg.wait_dmas();
  }
}

// wf[kh', kw', co, ci] = w[KH-1-kh', KW-1-kw', ci, co]. With channels in whole lanes-wide blocks
// each tap's [ci, co] matrix goes through vector memory and the transpose unit
// (emit_transpose_in_vmem); otherwise the whole kernel is loaded and each tap scattered transposed
// by element-strided DMAs, one per output channel.
void emit_flip_kernel(Codegen& cg, const std::string& name, int64_t w, int64_t wf,
                      const ConvGeom& g) {
  const int64_t block = int64_t{g.ci} * g.co, words = int64_t{g.kh} * g.kw * block;
  const int64_t taps = int64_t{g.kh} * g.kw, L = cg.spec().lanes;
  if (transposes_in_vmem(cg.spec(), g.ci, g.co) && 2 * block <= vmem_words(cg)) {
    for (int64_t t = 0; t < taps; ++t) {
      cg.dma(Opcode::DMAHV, 0, w + t * block, block);
      cg.wait_dmas();
      emit_transpose_in_vmem(cg, 0, block / L, g.ci, g.co);
      cg.em().barrier();
      cg.dma(Opcode::DMAVH, wf + (taps - 1 - t) * block, block, block);
      cg.wait_dmas();
    }
    return;
  }
  if (words > vmem_words(cg))
    throw Error("compiler", "tensor '" + name + "': the kernel needs " + sizes(words, cg));
  cg.dma(Opcode::DMAHV, 0, w, words);
  cg.wait_dmas();
  // Tap t = kh * KW + kw goes to the flipped tap KH * KW - 1 - t.
  emit_scatter_transposed(cg, 0, block, wf + (taps - 1) * block, -block, taps, g.ci, g.co, g.ci);
  cg.wait_dmas();
}

// A GEMM with a ragged last K tile relies on zeros in vector memory past the K columns of its A
// panels and past the K rows of its weight slots (the DMAs write only the valid part); other
// kernels leave data there, so the rows its loads read are cleared first.
void zero_vmem_footprint(Codegen& cg, const kernels::GemmPlan& plan) {
  const int z = cg.vreg();
  cg.op(Opcode::VBCASTI, z, 0, 0, 0, 0);
  for (int64_t r = 0; r < plan.load_rows; r += cg.spec().sublanes) cg.vst(z, r);
}

kernels::GemmProgram make_gemm_named(Codegen& cg, const std::string& name, int M, int K, int N,
                                     const kernels::GemmPlacement& at, bool loops) {
  try {
    return kernels::make_gemm(cg.spec(), M, K, N, at, loops, cg.em().nested_rolling());
  } catch (const Error& e) {
    throw Error("compiler", "matmul '" + name + "' [" + std::to_string(M) + " x " +
                                std::to_string(K) + "] x [" + std::to_string(K) + " x " +
                                std::to_string(N) + "]: " + e.what());
  }
}

// y [N * OH * OW, co] = im2col(xp) x w of the (already padded) xp [N, Hp, Wp, C], without the
// im2col matrix in HBM: per chunk of whole output lines (n, oh) the matrix's rows are DMA'd from
// xp straight into vector memory, each padded to whole K tiles (kernels/gemm.h, a_in_vmem), and
// the chunk's GEMM reads them there. Row (n, oh, ow) is, per kernel row kh, the KW * C contiguous
// words at xp[n, oh * s + kh, ow * s]: one 2-D DMA per line and kh (OW rows, source stride s * C).
// Every output is one K chain, as in one GEMM over the whole matrix.
void emit_conv_gemm(Codegen& cg, CompileStats& stats, const std::string& name, int64_t xp,
                    int64_t w, int64_t y, const ConvGeom& g, int64_t hp, int64_t wp, int64_t c,
                    int64_t s, int co) {
  const int64_t R = cg.spec().mxu_rows, lanes = cg.spec().lanes, S = cg.spec().sublanes;
  const int64_t K = int64_t{g.kh} * g.kw * c, KT = (K + R - 1) / R;
  const int64_t lines = int64_t{g.n} * g.oh, row = KT * lanes;  // words of a padded row
  const int64_t per_chunk = kernels::gemm_panel_rows(cg.spec(), static_cast<int>(K)) / g.ow;
  if (per_chunk < 1)
    throw Error("compiler", "tensor '" + name + ".im2col': one im2col line (" +
                                std::to_string(g.ow) + " x " + std::to_string(K) + ") needs " +
                                sizes(g.ow * row, cg));
  LineDmas d = im2col_row_dmas(cg, g, xp, hp, wp, c, s, row);
  int64_t shared_smem = -1, zeroed = -1;
  for (int64_t l0 = 0; l0 < lines; l0 += per_chunk) {
    const int64_t nl = std::min(per_chunk, lines - l0), M = nl * g.ow;
    const int64_t Mb = (M + S - 1) / S * S;
    // Chunks of one shape share one copy of the GEMM's descriptors.
    if (nl == per_chunk && shared_smem < 0) shared_smem = cg.next_smem();
    kernels::GemmPlacement at{0, w, y + l0 * g.ow * co, nl == per_chunk ? shared_smem : -1, true};
    if (at.smem_base < 0) at.smem_base = cg.next_smem();
    const kernels::GemmProgram gemm =
        make_gemm_named(cg, name, static_cast<int>(M), static_cast<int>(K), co, at, true);
    // Between its chunks only this kernel writes vector memory, at the same places for chunks of
    // one shape: the zeros past K in the rows and the weight slots survive.
    if (K % R != 0 && zeroed != Mb) zero_vmem_footprint(cg, gemm.plan);
    zeroed = Mb;
    d.dst.base = -l0 * g.ow * row;
    emit_line_range(cg, d, l0, nl, g.oh);
    cg.touch_rows(KT * Mb);
    cg.wait_dmas();
    cg.append(gemm.program, gemm.plan.vmem_rows);
    stats.mxu_macs += gemm.plan.macs();
  }
  ++stats.gemms;
}

// The padded input xp of a convolution (x itself when there is no padding).
int64_t padded_input(Codegen& cg, HbmScratch& scratch, int64_t& at, const std::string& name,
                     int64_t x, const ConvGeom& g) {
  if (g.pad == 0) return x;
  const int64_t hp = g.h + 2 * g.pad, wp = g.w + 2 * g.pad;
  const int64_t xp = scratch_take(scratch, at, int64_t{g.n} * hp * wp * g.ci, name + ".padded");
  emit_zero_hbm(cg, xp, int64_t{g.n} * hp * wp * g.ci);
  emit_place(cg, name + ".padded", x, xp, {g.n, g.h, g.w, g.ci, hp, wp, 1, g.pad, 1, g.pad});
  return xp;
}

}  // namespace

void emit_zero_hbm(Codegen& cg, int64_t dst, int64_t words) {
  emit_fill_hbm(cg, dst, words, 0);
}

void emit_fill_hbm(Codegen& cg, int64_t dst, int64_t words, int32_t value_bits) {
  const int64_t S = cg.spec().sublanes, lanes = cg.spec().lanes;
  const int64_t rows =
      std::min((cg.spec().vmem_rows() / S) * S, ((words + lanes - 1) / lanes + S - 1) / S * S);
  const int z = cg.vreg();
  cg.op(Opcode::VBCASTI, z, 0, 0, 0, value_bits);
  for (int64_t r = 0; r < rows; r += S) cg.vst(z, r);
  cg.em().barrier();
  for (int64_t w0 = 0; w0 < words; w0 += rows * lanes)
    cg.dma(Opcode::DMAVH, dst + w0, 0, std::min(rows * lanes, words - w0));
  cg.wait_dmas();
}

int64_t scratch_take(HbmScratch& s, int64_t& at, int64_t words, const std::string& what) {
  const int64_t addr = s.base + at;
  at += words;
  s.peak = std::max(s.peak, at);
  if (s.base + at > s.limit)
    throw Error("compiler", "tensor '" + what + "' (" + std::to_string(words) +
                                " words of scratch) does not fit HBM: it needs " +
                                std::to_string((s.base + at) * 4) + " bytes, the core has " +
                                std::to_string(s.limit * 4));
  return addr;
}

void emit_gemm(Codegen& cg, CompileStats& stats, const std::string& name, int64_t a, int64_t b,
               int64_t c, int M, int K, int N, int64_t smem_base, bool loops) {
  const kernels::GemmProgram gemm = make_gemm_named(
      cg, name, M, K, N, {a, b, c, smem_base >= 0 ? smem_base : cg.next_smem()}, loops);
  if (K % cg.spec().mxu_rows != 0) zero_vmem_footprint(cg, gemm.plan);
  cg.append(gemm.program, gemm.plan.vmem_rows);
  stats.mxu_macs += gemm.plan.macs();
  ++stats.gemms;
}

void emit_conv2d(Codegen& cg, CompileStats& stats, HbmScratch& scratch, const std::string& name,
                 int64_t x, int64_t w, int64_t y, const ConvGeom& g) {
  int64_t at = 0;
  const int64_t xp = padded_input(cg, scratch, at, name, x, g);
  emit_conv_gemm(cg, stats, name, xp, w, y, g, g.h + 2 * g.pad, g.w + 2 * g.pad, g.ci, g.stride,
                 g.co);
}

void emit_conv2d_input_grad(Codegen& cg, CompileStats& stats, HbmScratch& scratch,
                            const std::string& name, int64_t dy, int64_t w, int64_t dx,
                            const ConvGeom& g) {
  int64_t at = 0;
  const int64_t eh = g.h + g.kh - 1, ew = g.w + g.kw - 1;
  const int64_t e = scratch_take(scratch, at, int64_t{g.n} * eh * ew * g.co, name + ".dilated");
  emit_zero_hbm(cg, e, int64_t{g.n} * eh * ew * g.co);
  emit_place(
      cg, name + ".dilated", dy, e,
      {g.n, g.oh, g.ow, g.co, eh, ew, g.stride, g.kh - 1 - g.pad, g.stride, g.kw - 1 - g.pad});
  const int64_t K = int64_t{g.kh} * g.kw * g.co;
  const int64_t wf = scratch_take(scratch, at, K * g.ci, name + ".flipped");
  emit_flip_kernel(cg, name + ".flipped", w, wf, g);
  // The stride-1 convolution of e: output H x W.
  const ConvGeom full{
      g.n, static_cast<int>(eh), static_cast<int>(ew), g.co, g.kh, g.kw, g.ci, 1, 0, g.h, g.w};
  emit_conv_gemm(cg, stats, name, e, wf, dx, full, eh, ew, g.co, 1, g.ci);
}

void emit_conv2d_weight_grad(Codegen& cg, CompileStats& stats, HbmScratch& scratch,
                             const std::string& name, int64_t x, int64_t dy, int64_t dw,
                             const ConvGeom& g) {
  int64_t at = 0;
  const int64_t xp = padded_input(cg, scratch, at, name, x, g);
  const int64_t M = int64_t{g.n} * g.oh * g.ow, K = int64_t{g.kh} * g.kw * g.ci;
  const int64_t cols_t = scratch_take(scratch, at, M * K, name + ".im2col_t");
  emit_im2col_transposed(cg, name + ".im2col", xp, cols_t, g, g.h + 2 * g.pad, g.w + 2 * g.pad,
                         g.ci, g.stride);
  emit_gemm(cg, stats, name, cols_t, dy, dw, static_cast<int>(K), static_cast<int>(M), g.co);
}

}  // namespace tessera::compiler
