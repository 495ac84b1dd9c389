// Element-wise kernels on the vector unit: a streamed loop over vregs (chunks of whole rows sized
// to vector memory; DMA in, compute, DMA out), and the ops built on it: add (with a row-broadcast
// bias) and the other binary ops (mul), relu, relu_grad, SGD with momentum and Adam.
#include <bit>
#include <numeric>

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels.h"

namespace tessera::compiler {

using isa::Opcode;

void emit_stream(Codegen& cg, const std::string& tensor, int64_t rows, int64_t row_len,
                 const std::vector<StreamIn>& ins, const std::vector<int64_t>& outs,
                 const StreamBody& body, const std::function<void(Codegen&)>& setup,
                 int64_t reserved_top) {
  const core::CoreSpec& spec = cg.spec();
  const int64_t W = cg.words_per_vreg(), S = spec.sublanes, lanes = spec.lanes;
  // Pattern inputs (StreamIn::pattern): the vector repeats every `period` vregs; each one's period
  // sits below the reserved top, the other inputs and the outputs take a buffer each.
  const int64_t period = row_len / std::gcd(row_len, W);
  int64_t patterns = 0;
  for (const StreamIn& in : ins) patterns += in.row_broadcast && in.pattern;
  if (patterns * period * S > spec.vmem_rows() / 4) patterns = 0;  // too long: per chunk
  std::vector<int64_t> slot(ins.size());  // a pattern's first row, or the buffer's index
  int64_t buffers = 0, pattern_row = spec.vmem_rows() - reserved_top;
  for (size_t i = 0; i < ins.size(); ++i)
    slot[i] = patterns > 0 && ins[i].row_broadcast && ins[i].pattern ? (pattern_row -= period * S)
                                                                     : -1 - buffers++;
  const auto is_pattern = [&](size_t i) { return slot[i] >= 0; };
  buffers += static_cast<int64_t>(outs.size());
  const int64_t rows_avail = pattern_row / buffers;
  // rows per chunk: the most whose vregs fit one buffer each
  int64_t rc = std::min<int64_t>(rows, (rows_avail / S) * W / row_len);
  if (rc < 1)
    throw Error("compiler", "tensor '" + tensor + "': a row of " + std::to_string(row_len) +
                                " elements x " + std::to_string(buffers) +
                                " buffers does not fit vector memory (" +
                                std::to_string(spec.vmem_rows()) + " rows of " +
                                std::to_string(lanes) + " words)");
  const int64_t buf_rows = ceil_div(rc * row_len, W) * S;
  const int64_t first_out = buffers - static_cast<int64_t>(outs.size());  // the outputs' buffers
  const auto buffer_row = [&](size_t i) { return (-1 - slot[i]) * buf_rows; };
  for (size_t i = 0; i < ins.size(); ++i)  // the period's rows of the vector, once
    if (is_pattern(i))
      cg.dma(Opcode::DMAHV2, slot[i] * lanes, ins[i].hbm,
             cg.descriptor(period * W / row_len, row_len, 0, row_len));
  for (int64_t r0 = 0; r0 < rows; r0 += rc) {
    const int64_t nr = std::min(rc, rows - r0), words = nr * row_len, nv = ceil_div(words, W);
    for (size_t i = 0; i < ins.size(); ++i) {
      if (is_pattern(i)) continue;
      const int64_t dst = buffer_row(i) * lanes;
      if (ins[i].row_broadcast)
        cg.dma(Opcode::DMAHV2, dst, ins[i].hbm, cg.descriptor(nr, row_len, 0, row_len));
      else
        cg.dma(Opcode::DMAHV, dst, ins[i].hbm + r0 * row_len, words);
    }
    cg.wait_dmas();
    if (setup) setup(cg);
    for (int64_t j = 0; j < nv; ++j) {
      std::vector<int> in(ins.size());
      for (size_t i = 0; i < ins.size(); ++i) {
        in[i] = cg.vreg();
        cg.vld(in[i], is_pattern(i) ? slot[i] + (j % period) * S : buffer_row(i) + j * S);
      }
      const std::vector<int> out = body(cg, in);
      TESSERA_CHECK(out.size() == outs.size(), "stream body output count");
      for (size_t o = 0; o < outs.size(); ++o)
        cg.vst(out[o], (first_out + static_cast<int64_t>(o)) * buf_rows + j * S);
    }
    cg.em().barrier();
    for (size_t o = 0; o < outs.size(); ++o)
      cg.dma(Opcode::DMAVH, outs[o] + r0 * row_len,
             (first_out + static_cast<int64_t>(o)) * buf_rows * lanes, words);
    cg.wait_dmas();
  }
}

void emit_binary(Codegen& cg, const std::string& name, Opcode op, int64_t a, int64_t b, int64_t out,
                 int64_t rows, int64_t row_len, bool broadcast) {
  emit_stream(cg, name, rows, row_len, {{a, false}, {b, broadcast}}, {out},
              [op](Codegen& c, const std::vector<int>& in) {
                const int r = c.vreg();
                c.op(op, r, in[0], in[1]);
                return std::vector<int>{r};
              });
}

void emit_add(Codegen& cg, const std::string& name, int64_t a, int64_t b, int64_t out, int64_t rows,
              int64_t row_len, bool broadcast) {
  emit_binary(cg, name, Opcode::VADDF, a, b, out, rows, row_len, broadcast);
}

void emit_relu(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t n) {
  emit_stream(
      cg, name, n, 1, {{x, false}}, {out},
      [](Codegen& c, const std::vector<int>& in) {
        const int r = c.vreg();
        c.op(Opcode::VMAXF, r, in[0], 0);
        return std::vector<int>{r};
      },
      [](Codegen& c) { c.op(Opcode::VBCASTI, 0, 0, 0, 0, 0); });
}

void emit_relu_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t out,
                    int64_t n) {
  emit_stream(
      cg, name, n, 1, {{dy, false}, {x, false}}, {out},
      [](Codegen& c, const std::vector<int>& in) {
        const int r = c.vreg();
        c.op(Opcode::VCMPLTF, 1, 0, in[1]);  // m1 = 0 < x
        c.op(Opcode::VSEL, r, in[0], 0, 1);  // r = m1 ? dy : +0
        return std::vector<int>{r};
      },
      [](Codegen& c) { c.op(Opcode::VBCASTI, 0, 0, 0, 0, 0); });
}

void emit_sgd(Codegen& cg, const std::string& name, int64_t theta, int64_t vel, int64_t grad,
              int64_t n, float lr, float mu) {
  emit_stream(
      cg, name, n, 1, {{theta, false}, {vel, false}, {grad, false}}, {theta, vel},
      [](Codegen& c, const std::vector<int>& in) {
        const int p = c.vreg(), v = c.vreg(), q = c.vreg(), t = c.vreg();
        c.op(Opcode::VMULF, p, 0, in[1]);  // mu * vel
        c.op(Opcode::VADDF, v, p, in[2]);  // + g
        c.op(Opcode::VMULF, q, 1, v);      // (-lr) * vel
        c.op(Opcode::VADDF, t, in[0], q);  // theta + ...
        return std::vector<int>{t, v};
      },
      [lr, mu](Codegen& c) {
        c.op(Opcode::VBCASTI, 0, 0, 0, 0, bits(mu));
        c.op(Opcode::VBCASTI, 1, 0, 0, 0, bits(-lr));
      });
}

VectorCode scheduled(Codegen& cg) {
  return VectorCode{[&cg] { return cg.vreg(); },
                    [&cg](Opcode op, int d, int a, int b, int c) { cg.op(op, d, a, b, c); }};
}

int emit_divide(const VectorCode& out, int a, int b, int rcp_b) {
  int y = rcp_b;
  if (y < 0) {
    y = out.fresh();
    out.op(Opcode::ERCP, 0, b, 0, 0);
    out.op(Opcode::EPOP, y, 0, 0, 0);
  }
  const int q0 = out.fresh(), nq = out.fresh(), r = out.fresh(), q = out.fresh();
  out.op(Opcode::VMULF, q0, a, y, 0);
  out.op(Opcode::VNEGF, nq, q0, 0, 0);
  out.op(Opcode::VFMAF, r, nq, b, a);  // a - q0 * b, exact
  out.op(Opcode::VFMAF, q, r, y, q0);  // q0 + r * y
  return q;
}

AdamUpdate emit_adam_update(const VectorCode& out, const AdamConstRegs& k, int theta, int m, int v,
                            int g, const std::function<void(int, int)>& moments) {
  const int p = out.fresh(), q = out.fresh(), mn = out.fresh();
  out.op(Opcode::VMULF, p, k.b1, m, 0);
  out.op(Opcode::VMULF, q, k.omb1, g, 0);
  out.op(Opcode::VADDF, mn, p, q, 0);
  const int p2 = out.fresh(), t = out.fresh(), q2 = out.fresh(), vn = out.fresh();
  out.op(Opcode::VMULF, p2, k.b2, v, 0);
  out.op(Opcode::VMULF, t, k.omb2, g, 0);
  out.op(Opcode::VMULF, q2, t, g, 0);
  out.op(Opcode::VADDF, vn, p2, q2, 0);
  if (moments) moments(mn, vn);
  const int sq = out.fresh(), den = out.fresh(), u = out.fresh(), th = out.fresh();
  out.op(Opcode::ESQRT, 0, vn, 0, 0);
  out.op(Opcode::EPOP, sq, 0, 0, 0);
  const int qq = emit_divide(out, sq, k.sqrt_bc2, k.rcp_sqrt_bc2);  // sqrt(v) / sqrt_bc2
  out.op(Opcode::VADDF, den, qq, k.eps, 0);                         // + eps
  const int r = emit_divide(out, mn, den, -1);                      // m / denom
  out.op(Opcode::VMULF, u, k.neg_step, r, 0);                       // (-step) * ...
  out.op(Opcode::VADDF, th, theta, u, 0);
  return AdamUpdate{th, mn, vn};
}

void emit_adam(Codegen& cg, const std::string& name, int64_t theta, int64_t m, int64_t v,
               int64_t grad, int64_t n, float b1, float b2, float eps, float omb1, float omb2,
               int64_t scalars) {
  const int64_t W = cg.words_per_vreg();
  // The per-step scalars, each broadcast to a whole vreg at the top of vector memory.
  const int64_t top = cg.spec().vmem_rows() - 2 * cg.spec().sublanes;
  cg.dma(Opcode::DMAHV2, top * cg.spec().lanes, scalars, cg.descriptor(W, 1, 0, 1));
  cg.dma(Opcode::DMAHV2, (top + cg.spec().sublanes) * cg.spec().lanes, scalars + 1,
         cg.descriptor(W, 1, 0, 1));
  cg.wait_dmas();
  emit_stream(
      cg, name, n, 1, {{theta, false}, {m, false}, {v, false}, {grad, false}}, {theta, m, v},
      [](Codegen& c, const std::vector<int>& in) {
        const AdamUpdate u = emit_adam_update(scheduled(c), AdamConstRegs{0, 1, 2, 3, 4, 5, 6, 7},
                                              in[0], in[1], in[2], in[3]);
        return std::vector<int>{u.theta, u.m, u.v};
      },
      [=](Codegen& c) {
        c.op(Opcode::VBCASTI, 0, 0, 0, 0, bits(b1));
        c.op(Opcode::VBCASTI, 1, 0, 0, 0, bits(b2));
        c.op(Opcode::VBCASTI, 2, 0, 0, 0, bits(omb1));
        c.op(Opcode::VBCASTI, 3, 0, 0, 0, bits(omb2));
        c.op(Opcode::VBCASTI, 4, 0, 0, 0, bits(eps));
        c.vld(6, top);                      // step_f
        c.op(Opcode::VNEGF, 5, 6);          // -step_f
        c.vld(7, top + c.spec().sublanes);  // sqrt_bc2_f (kept in v7)
        c.op(Opcode::ERCP, 0, 7);
        c.op(Opcode::EPOP, 6);  // rcp(sqrt_bc2_f)
        c.vld(7, top + c.spec().sublanes);
      },
      2 * cg.spec().sublanes);
}

}  // namespace tessera::compiler
