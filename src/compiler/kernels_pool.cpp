// Max-pooling forward and backward on the vector unit (see kernels_conv.h).
//
// Each window tap (kh, kw) of a chunk of output lines (n, oh) is gathered into its own vector-
// memory buffer [lines, OW, C] by one 2-D DMA per (line, tap) (count OW, chunk C, source stride
// stride * C), so output element i of every tap buffer belongs to the same window. Forward: a
// compare-select chain over the taps in (kh, kw) order keeps the first maximum (best < tap picks
// the tap), as graph/conv_kernels.cpp's window_argmax. Backward: the same chain tracks the winning
// tap's index; tap t's gradient is (+0 + dy) where t won, else +0. Without overlapping windows
// (stride >= window) each input gets at most one term: the tap buffers are scattered back by the
// inverse DMAs, inputs covered by no window zeroed first. With overlapping windows dx is zeroed,
// then per chunk of lines, tap by tap in descending (kh, kw) order, dx's words under the tap are
// gathered, the tap's gradient added (dx + g) and scattered back. An input's terms so arrive in
// ascending (oh, ow) order, the host's (it adds dy at each window's maximum in (n, oh, ow)
// order); adding +0 where a tap lost changes nothing, as dx, starting at +0, is never -0.
#include <algorithm>

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels_conv.h"
#include "compiler/kernels_line_dma.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

struct PoolTiles {
  int64_t taps, line, per_chunk, buf_rows;  // buffer = rows of one tap (or dy, out) buffer
};

PoolTiles pool_tiles(const Codegen& cg, const std::string& name, const ConvGeom& g,
                     int64_t extra_buffers) {
  const core::CoreSpec& spec = cg.spec();
  const int64_t W = spec.sublanes * spec.lanes;
  PoolTiles t{};
  t.taps = int64_t{g.kh} * g.kw;
  t.line = int64_t{g.ow} * g.ci;
  const int64_t buffers = t.taps + extra_buffers;
  const int64_t rows_per_buffer = (spec.vmem_rows() / buffers) / spec.sublanes * spec.sublanes;
  t.per_chunk = std::min<int64_t>(int64_t{g.n} * g.oh, rows_per_buffer * spec.lanes / t.line);
  if (t.per_chunk < 1)
    throw Error("compiler", "tensor '" + name + "': one pooling line of " + std::to_string(t.line) +
                                " words x " + std::to_string(buffers) +
                                " buffers does not fit vector memory (" +
                                std::to_string(spec.vmem_rows()) + " rows of " +
                                std::to_string(spec.lanes) + " words)");
  t.buf_rows = ceil_div(t.per_chunk * t.line, W) * spec.sublanes;
  return t;
}

// Gathers (to_vmem) or scatters back the tap buffers of lines [l0, l0 + nl) of tensor x [N, H, W,
// C]: taps [first, first + count) (default: all) at buffers buffer, buffer + 1, ...
void move_taps(Codegen& cg, const ConvGeom& g, const PoolTiles& t, int64_t x, int64_t l0,
               int64_t nl, bool to_vmem, int64_t first = 0, int64_t count = -1,
               int64_t buffer = 0) {
  if (count < 0) count = t.taps;
  const int64_t lanes = cg.spec().lanes;
  const uint32_t desc = to_vmem ? cg.descriptor(g.ow, g.ci, int64_t{g.stride} * g.ci, g.ci)
                                : cg.descriptor(g.ow, g.ci, g.ci, int64_t{g.stride} * g.ci);
  // Line (n, oh) of tap (kh, kw): HBM x + ((n * H + oh * stride + kh) * W + kw) * C, vector memory
  // tap * buf_rows * lanes + (l - l0) * line.
  const LineAddr hbm{x, int64_t{g.h} * g.w * g.ci, int64_t{g.stride} * g.w * g.ci};
  const LineAddr vmem{-l0 * t.line, int64_t{g.oh} * t.line, t.line};
  std::vector<std::array<int64_t, 2>> offsets;
  for (int64_t tap = first; tap < first + count; ++tap) {
    const int64_t kh = tap / g.kw, kw = tap % g.kw;
    const int64_t v = (buffer + tap - first) * t.buf_rows * lanes, h = (kh * g.w + kw) * g.ci;
    offsets.push_back(to_vmem ? std::array<int64_t, 2>{v, h} : std::array<int64_t, 2>{h, v});
  }
  const LineDmas d{to_vmem ? Opcode::DMAHV2 : Opcode::DMAVH2, desc, to_vmem ? vmem : hbm,
                   to_vmem ? hbm : vmem, offsets};
  emit_line_range(cg, d, l0, nl, g.oh);
  if (to_vmem) cg.touch_rows((buffer + count) * t.buf_rows);
}

// Overlapping windows: dx += tap buffer `tap` at its words, for taps in descending order, through
// the accumulator buffer `acc`.
void accumulate_taps(Codegen& cg, const ConvGeom& g, const PoolTiles& t, int64_t dx, int64_t l0,
                     int64_t nl, int64_t acc) {
  const int64_t W = cg.words_per_vreg(), S = cg.spec().sublanes;
  const int64_t words = nl * t.line;
  cg.em().barrier();
  for (int64_t tap = t.taps - 1; tap >= 0; --tap) {
    move_taps(cg, g, t, dx, l0, nl, true, tap, 1, acc);
    cg.wait_dmas();
    for (int64_t j = 0; j < ceil_div(words, W); ++j) {
      const int a = cg.vreg(), b = cg.vreg(), sum = cg.vreg();
      cg.vld(a, acc * t.buf_rows + j * S);
      cg.vld(b, tap * t.buf_rows + j * S);
      cg.op(Opcode::VADDF, sum, a, b);
      cg.vst(sum, acc * t.buf_rows + j * S);
    }
    cg.em().barrier();
    move_taps(cg, g, t, dx, l0, nl, false, tap, 1, acc);
    cg.wait_dmas();
  }
}

// The first maximum over the taps of vreg position j: returns {best value, winning tap index}.
std::pair<int, int> first_max(Codegen& cg, const PoolTiles& t, int64_t j, bool want_index) {
  int best = cg.vreg();
  cg.vld(best, j);
  int idx = -1;
  if (want_index) {
    idx = cg.vreg();
    cg.op(Opcode::VBCASTI, idx, 0, 0, 0, 0);
  }
  for (int64_t tap = 1; tap < t.taps; ++tap) {
    const int v = cg.vreg(), nb = cg.vreg();
    cg.vld(v, tap * t.buf_rows + j);
    cg.op(Opcode::VCMPLTF, 1, best, v);  // m1 = best < tap
    cg.op(Opcode::VSEL, nb, v, best, 1);
    best = nb;
    if (want_index) {
      const int k = cg.vreg(), ni = cg.vreg();
      cg.op(Opcode::VBCASTI, k, 0, 0, 0, static_cast<int32_t>(tap));
      cg.op(Opcode::VSEL, ni, k, idx, 1);
      idx = ni;
    }
  }
  return {best, idx};
}

}  // namespace

void emit_maxpool2d(Codegen& cg, const std::string& name, int64_t x, int64_t y, const ConvGeom& g) {
  const PoolTiles t = pool_tiles(cg, name, g, 1);
  const int64_t W = cg.words_per_vreg(), S = cg.spec().sublanes, lanes = cg.spec().lanes;
  const int64_t out = t.taps * t.buf_rows, lines = int64_t{g.n} * g.oh;
  for (int64_t l0 = 0; l0 < lines; l0 += t.per_chunk) {
    const int64_t nl = std::min(t.per_chunk, lines - l0), words = nl * t.line;
    move_taps(cg, g, t, x, l0, nl, true);
    cg.wait_dmas();
    for (int64_t j = 0; j < ceil_div(words, W); ++j)
      cg.vst(first_max(cg, t, j * S, false).first, out + j * S);
    cg.em().barrier();
    cg.dma(Opcode::DMAVH, y + l0 * t.line, out * lanes, words);
    cg.wait_dmas();
  }
}

void emit_maxpool2d_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t dx,
                         const ConvGeom& g) {
  const bool overlap = g.stride < g.kh || g.stride < g.kw;
  if (int64_t{g.oh} * g.stride != g.h || int64_t{g.ow} * g.stride != g.w || g.stride != g.kh ||
      g.stride != g.kw)
    emit_zero_hbm(cg, dx, int64_t{g.n} * g.h * g.w * g.ci);
  const PoolTiles t = pool_tiles(cg, name, g, overlap ? 2 : 1);
  const int64_t W = cg.words_per_vreg(), S = cg.spec().sublanes, lanes = cg.spec().lanes;
  const int64_t dyb = t.taps * t.buf_rows, lines = int64_t{g.n} * g.oh;
  for (int64_t l0 = 0; l0 < lines; l0 += t.per_chunk) {
    const int64_t nl = std::min(t.per_chunk, lines - l0), words = nl * t.line;
    move_taps(cg, g, t, x, l0, nl, true);
    cg.dma(Opcode::DMAHV, dyb * lanes, dy + l0 * t.line, words);
    cg.wait_dmas();
    cg.op(Opcode::VBCASTI, 0, 0, 0, 0, 0);
    for (int64_t j = 0; j < ceil_div(words, W); ++j) {
      const int idx = first_max(cg, t, j * S, true).second;
      const int d = cg.vreg(), d0 = cg.vreg();
      cg.vld(d, dyb + j * S);
      cg.op(Opcode::VADDF, d0, 0, d);  // +0 + dy, as the host's accumulation into zeros
      for (int64_t tap = 0; tap < t.taps; ++tap) {
        const int k = cg.vreg(), gt = cg.vreg();
        cg.op(Opcode::VBCASTI, k, 0, 0, 0, static_cast<int32_t>(tap));
        cg.op(Opcode::VCMPEQI, 1, idx, k);
        cg.op(Opcode::VSEL, gt, d0, 0, 1);
        cg.vst(gt, tap * t.buf_rows + j * S);
      }
    }
    if (overlap) {
      accumulate_taps(cg, g, t, dx, l0, nl, t.taps + 1);
      continue;
    }
    cg.em().barrier();
    move_taps(cg, g, t, dx, l0, nl, false);
    cg.wait_dmas();
  }
}

}  // namespace tessera::compiler
