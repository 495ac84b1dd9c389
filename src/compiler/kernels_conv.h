// Convolution and max-pooling kernels of the compiled program (NHWC activations, HWIO weights),
// with exactly the arithmetic of the host reference's chip numerics (graph/conv_kernels.cpp):
//
//   conv2d              im2col(x) [N*OH*OW, KH*KW*Ci] x w [KH*KW*Ci, Co]: one GEMM (kernels/gemm,
//                       numerics::mxu_matmul_accumulate, K = (kh, kw, ci) ascending)
//   conv2d_input_grad   the stride-1 convolution of e (dy zero-dilated by the stride, placed at
//                       offset KH-1-pad) with the flipped, transposed kernel wf[kh', kw', co, ci] =
//                       w[KH-1-kh', KW-1-kw', ci, co]: im2col(e) x wf, K = (kh', kw', co) ascending
//   conv2d_weight_grad  im2col(x)^T [K, N*OH*OW] x dy [N*OH*OW, Co]: K order (n, oh, ow) ascending
//   maxpool2d           per window the first maximum in (kh, kw) order (compare-select chain)
//   maxpool2d_grad      dy to the first maximum of each window, +0 + dy, summed in (oh, ow) order
//
// Implicit im2col (conv2d, conv2d_input_grad): the im2col matrix is never stored in HBM. The GEMM
// runs over chunks of whole output lines (n, oh); each chunk's im2col rows are DMA'd from the
// activations straight into vector memory (one 2-D DMA per line and kernel row), padded to whole
// K tiles, and the chunk's GEMM reads them there (kernels/gemm.h, a_in_vmem). Every output is the
// same K chain as in one GEMM over the whole matrix.
//
// Data movement (the ISA has no HBM -> HBM DMA): padded/dilated copies, the weight gradient's
// transposed im2col matrix and the flipped kernel are built in HBM scratch by 2-D DMAs through
// vector memory. Scratch lives above the HBM plan (HbmScratch); every kernel's scratch is dead
// when it ends, so all share one region. Tiles: chunks of whole output lines (n, oh) sized to the
// configured vector memory; a tensor whose single line (or image) cannot fit is an Error naming it
// and the sizes.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/codegen.h"
#include "compiler/compiler.h"
#include "graph/kernels.h"

namespace tessera::compiler {

// HBM scratch words [base, base + peak) used by the kernels; `limit` = the HBM's word count.
struct HbmScratch {
  int64_t base = 0;
  int64_t limit = 0;
  int64_t peak = 0;
};

// Takes `words` of scratch at offset `at` (words from scratch.base; `at` advances); returns the
// HBM address. An Error naming `what` when HBM is too small.
int64_t scratch_take(HbmScratch& s, int64_t& at, int64_t words, const std::string& what);

// C[M, N] = A[M, K] x B[K, N] through kernels/gemm (clears the vector memory a ragged K tile
// reads). Its DMA descriptors (counts and strides only) go to scalar memory from `smem_base`, by
// default after everything there: GEMMs of one shape may share one copy. `loops` false: the
// GEMM's straight code (kernels/gemm.h), for a caller that rolls a sequence of GEMMs itself.
void emit_gemm(Codegen& cg, CompileStats& stats, const std::string& name, int64_t a, int64_t b,
               int64_t c, int M, int K, int N, int64_t smem_base = -1, bool loops = true);

using ConvGeom = graph::kernels::ConvGeom;

void emit_conv2d(Codegen& cg, CompileStats& stats, HbmScratch& scratch, const std::string& name,
                 int64_t x, int64_t w, int64_t y, const ConvGeom& g);
void emit_conv2d_input_grad(Codegen& cg, CompileStats& stats, HbmScratch& scratch,
                            const std::string& name, int64_t dy, int64_t w, int64_t dx,
                            const ConvGeom& g);
void emit_conv2d_weight_grad(Codegen& cg, CompileStats& stats, HbmScratch& scratch,
                             const std::string& name, int64_t x, int64_t dy, int64_t dw,
                             const ConvGeom& g);

// Pooling geometry as the host's: kh = kw = window, co = ci, pad = 0.
void emit_maxpool2d(Codegen& cg, const std::string& name, int64_t x, int64_t y, const ConvGeom& g);
void emit_maxpool2d_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t dx,
                         const ConvGeom& g);

// HBM [dst, dst + words) = +0 (a zeroed vector-memory region copied out by DMA).
void emit_zero_hbm(Codegen& cg, int64_t dst, int64_t words);
// HBM [dst, dst + words) = the word value_bits (e.g. bits(f) for the float f), likewise.
void emit_fill_hbm(Codegen& cg, int64_t dst, int64_t words, int32_t value_bits);

}  // namespace tessera::compiler

namespace tessera::compiler {

struct Pipeline;
// Lowers a conv2d / conv2d_input_grad / conv2d_weight_grad / maxpool2d / maxpool2d_grad node
// (scratch above the HBM plan; p.scratch_words records the peak). False for any other op.
bool lower_conv_op(Pipeline& p, Codegen& cg, const graph::Node& n);

}  // namespace tessera::compiler
