// Transpose x [rows, cols] -> out [cols, rows] on the transpose unit (XU), in chunks of rows sized
// to vector memory (and of columns, when L rows of all of them do not fit: a [B*S, vocab] logits
// gradient). L = lanes, S = sublanes, P = ceil(L / S) slices per L x L block.
//   in buffer  (vmem row 0):    chunk row r, column block j at row r * cpr + j   (cpr = ceil(cols /
//   L))
//                               one 2-D DMA (one chunk per source row, destination stride cpr * L)
//   out buffer (after in):      transposed row c, row block i at row c * rpc + i (rpc = ceil(nr /
//   L)) block (i, j): P strided loads (vld.s, stride cpr) of rows i*L + k*S .., lanes j*L ..; P
//   xpush;
//                 P xpop, each S rows j*L + k*S .. of the transposed block, stored with vst.s
//                 (stride rpc); one 2-D DMA writes the chunk's nr columns of every output row.
// Lanes and rows past the tensor's edge carry whatever vector memory held; they are transposed
// into rows and lanes that are never written back. A core whose XU FIFO cannot hold a whole block
// (or whose sublanes do not divide its lanes) uses element-strided DMAs instead (one 2-D DMA per
// source row).
#include <algorithm>
#include <utility>

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

void transpose_by_dma(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t rows,
                      int64_t cols) {
  const core::CoreSpec& spec = cg.spec();
  const int64_t words = spec.vmem_rows() * spec.lanes;
  const int64_t rc = std::min(rows, words / cols);
  if (rc < 1)
    throw Error("compiler", "tensor '" + name + "': a row of " + std::to_string(cols) +
                                " elements does not fit vector memory");
  const uint32_t desc = cg.descriptor(cols, 1, 1, rows);
  for (int64_t r0 = 0; r0 < rows; r0 += rc) {
    const int64_t nr = std::min(rc, rows - r0);
    cg.dma(Opcode::DMAHV, 0, x + r0 * cols, nr * cols);
    cg.wait_dmas();
    for (int64_t r = 0; r < nr; ++r) cg.dma(Opcode::DMAVH2, out + r0 + r, r * cols, desc);
    cg.wait_dmas();
  }
}

// One side of an L x L block's trip through the transpose unit: slice k is the S rows
// `offset + k * S * stride + s * stride` (s < S) past the row in scalar register `base`, with
// `stride` in `stride_reg`. With base = kRegZero the rows are known and each access declares its
// own; otherwise it may touch any row of [lo, hi].
struct BlockRows {
  int base;
  int64_t offset;
  int stride_reg;
  int64_t stride;
  int64_t lo = 0, hi = 0;
};

// Pushes the block's P slices from `in` and pops the transposed slices to `out`.
void transpose_block(Codegen& cg, const BlockRows& in, const BlockRows& out) {
  const int64_t L = cg.spec().lanes, S = cg.spec().sublanes, P = ceil_div(L, S);
  const auto rows = [S](const BlockRows& b, int64_t k) {
    const int64_t first = b.offset + k * S * b.stride;
    return b.base == kRegZero ? std::pair{first, first + (S - 1) * b.stride}
                              : std::pair{b.lo, b.hi};
  };
  for (int64_t k = 0; k < P; ++k) {
    const int v = cg.vreg();
    const auto [lo, hi] = rows(in, k);
    cg.op_rows(Opcode::VLDS, v, in.base, in.stride_reg, 0,
               static_cast<int32_t>(in.offset + k * S * in.stride), lo, hi);
    cg.op(Opcode::XPUSH, 0, v);
  }
  for (int64_t k = 0; k < P; ++k) {
    const int v = cg.vreg();
    cg.op(Opcode::XPOP, v);
    const auto [lo, hi] = rows(out, k);
    cg.op_rows(Opcode::VSTS, 0, v, out.base, out.stride_reg,
               static_cast<int32_t>(out.offset + k * S * out.stride), lo, hi);
  }
}

// Whether the transpose unit's FIFO holds a whole L x L block of S-row slices.
bool xu_holds_block(const core::CoreSpec& spec) {
  return spec.lanes % spec.sublanes == 0 && spec.xu_fifo >= spec.lanes / spec.sublanes;
}

// Scalar temporaries of the block loops (free between kernels' ops, as kernels_line_dma.cpp's).
constexpr int kInRow = 20, kOutRow = 21, kIn = 22, kOut = 23;

}  // namespace

bool transposes_in_vmem(const core::CoreSpec& spec, int64_t rows, int64_t cols) {
  return xu_holds_block(spec) && rows % spec.lanes == 0 && cols % spec.lanes == 0;
}

void emit_transpose_in_vmem(Codegen& cg, int64_t in_row, int64_t out_row, int64_t rows,
                            int64_t cols) {
  const core::CoreSpec& spec = cg.spec();
  TESSERA_CHECK(transposes_in_vmem(spec, rows, cols), "transpose_in_vmem: unsupported shape");
  const int64_t L = spec.lanes;
  const int64_t cpr = cols / L, rpc = rows / L;
  const int64_t in_last = in_row + rows * cpr - 1, out_last = out_row + cols * rpc - 1;
  cg.sli(kRegStride, cpr);
  cg.sli(kRegStride2, rpc);
  cg.sli(kInRow, in_row);    // block (i, 0) of the input: in_row + i * L * cpr
  cg.sli(kOutRow, out_row);  // its transpose's first block: out_row + i
  if (rpc > 1) cg.loop_begin(rpc);
  cg.op(Opcode::SADDI, kIn, kInRow, 0, 0, 0);
  cg.op(Opcode::SADDI, kOut, kOutRow, 0, 0, 0);
  if (cpr > 1) cg.loop_begin(cpr);
  // Block (i, j): its slices are rows i * L + k * S .. of lanes j * L ..; popped, the transposed
  // slice k is rows j * L + k * S .. of the output's lanes i * L ..
  transpose_block(cg, {kIn, 0, kRegStride, cpr, in_row, in_last},
                  {kOut, 0, kRegStride2, rpc, out_row, out_last});
  if (cpr > 1) {
    cg.op(Opcode::SADDI, kIn, kIn, 0, 0, 1);
    cg.op(Opcode::SADDI, kOut, kOut, 0, 0, static_cast<int32_t>(L * rpc));
    cg.loop_end();
  }
  if (rpc > 1) {
    cg.op(Opcode::SADDI, kInRow, kInRow, 0, 0, static_cast<int32_t>(L * cpr));
    cg.op(Opcode::SADDI, kOutRow, kOutRow, 0, 0, 1);
    cg.loop_end();
  }
}

void emit_transpose(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t rows,
                    int64_t cols) {
  const core::CoreSpec& spec = cg.spec();
  const int64_t L = spec.lanes;
  if (!xu_holds_block(spec)) return transpose_by_dma(cg, name, x, out, rows, cols);
  // Column blocks per chunk: all of a row's, or as many as vector memory holds for L rows (the
  // in and out buffers take L rows per column block each), the columns then taken in chunks.
  const int64_t cpr = std::min(ceil_div(cols, L), spec.vmem_rows() / (2 * L));
  if (cpr < 1)
    throw Error("compiler", "tensor '" + name + "': transposing " + std::to_string(L) +
                                " rows of " + std::to_string(L) + " elements needs " +
                                std::to_string(2 * L) + " rows of vector memory, it has " +
                                std::to_string(spec.vmem_rows()));
  const int64_t cc = std::min(cols, cpr * L);
  const int64_t rc = std::min(rows, spec.vmem_rows() / (2 * L * cpr) * L);
  for (int64_t c0 = 0; c0 < cols; c0 += cc) {
    const int64_t nc = std::min(cc, cols - c0), cb = ceil_div(nc, L);
    for (int64_t r0 = 0; r0 < rows; r0 += rc) {
      const int64_t nr = std::min(rc, rows - r0), rpc = ceil_div(nr, L);
      const int64_t out_row = rpc * L * cpr;
      cg.dma(Opcode::DMAHV2, 0, x + r0 * cols + c0, cg.descriptor(nr, nc, cols, cpr * L));
      cg.wait_dmas();
      cg.sli(kRegStride, cpr);
      cg.sli(kRegStride2, rpc);
      for (int64_t i = 0; i < rpc; ++i)
        for (int64_t j = 0; j < cb; ++j)
          transpose_block(cg, {kRegZero, (i * L) * cpr + j, kRegStride, cpr},
                          {kRegZero, out_row + (j * L) * rpc + i, kRegStride2, rpc});
      cg.em().barrier();
      cg.dma(Opcode::DMAVH2, out + c0 * rows + r0, out_row * L,
             cg.descriptor(nc, nr, rpc * L, rows));
      cg.wait_dmas();
    }
  }
}

}  // namespace tessera::compiler
