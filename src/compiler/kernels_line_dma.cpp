#include "compiler/kernels_line_dma.h"

#include <algorithm>
#include <climits>

#include "common/error.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

// Scalar registers of the loops (temporaries of the Codegen convention, free between kernels'
// ops): image cursors, line cursors, the descriptor and two operand pairs.
constexpr int kDstImage = 20, kSrcImage = 21, kDstLine = 22, kSrcLine = 23, kDesc = 24;
constexpr int kOperand[2][2] = {{25, 26}, {27, 19}};

int32_t imm(int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX)
    throw Error("compiler", "a DMA address step does not fit a 32-bit immediate");
  return static_cast<int32_t>(v);
}

}  // namespace

void emit_line_loops(Codegen& cg, const LineDmas& d, int64_t n0, int64_t images, int64_t r0,
                     int64_t rows) {
  if (images <= 0 || rows <= 0) return;
  cg.sli(kDesc, d.desc);
  cg.sli(kDstImage, d.dst.base + n0 * d.dst.per_image + r0 * d.dst.per_line);
  cg.sli(kSrcImage, d.src.base + n0 * d.src.per_image + r0 * d.src.per_line);
  if (images > 1) cg.loop_begin(images);
  cg.op(Opcode::SADDI, kDstLine, kDstImage, 0, 0, 0);
  cg.op(Opcode::SADDI, kSrcLine, kSrcImage, 0, 0, 0);
  if (rows > 1) cg.loop_begin(rows);
  for (size_t j = 0; j < d.offsets.size(); ++j) {
    const int* r = kOperand[j % 2];
    cg.op(Opcode::SADDI, r[0], kDstLine, 0, 0, imm(d.offsets[j][0]));
    cg.op(Opcode::SADDI, r[1], kSrcLine, 0, 0, imm(d.offsets[j][1]));
    cg.dma_regs(d.op, r[0], r[1], kDesc);
  }
  if (rows > 1) {
    cg.op(Opcode::SADDI, kDstLine, kDstLine, 0, 0, imm(d.dst.per_line));
    cg.op(Opcode::SADDI, kSrcLine, kSrcLine, 0, 0, imm(d.src.per_line));
    cg.loop_end();
  }
  if (images > 1) {
    cg.op(Opcode::SADDI, kDstImage, kDstImage, 0, 0, imm(d.dst.per_image));
    cg.op(Opcode::SADDI, kSrcImage, kSrcImage, 0, 0, imm(d.src.per_image));
    cg.loop_end();
  }
}

void emit_line_range(Codegen& cg, const LineDmas& d, int64_t l0, int64_t count, int64_t per_image) {
  int64_t l = l0;
  const int64_t end = l0 + count;
  if (l % per_image != 0) {
    const int64_t rows = std::min(end, (l / per_image + 1) * per_image) - l;
    emit_line_loops(cg, d, l / per_image, 1, l % per_image, rows);
    l += rows;
  }
  const int64_t whole = (end - l) / per_image;
  emit_line_loops(cg, d, l / per_image, whole, 0, per_image);
  l += whole * per_image;
  emit_line_loops(cg, d, l / per_image, 1, 0, end - l);
}

}  // namespace tessera::compiler
