// The program of a suite row on one core, built by the compiler's lowering: every graph value at
// an HBM word address (the inputs in graph order, then each node's output, each starting on a
// 1024-word boundary; a reshape's output is its input's words), the kernels' scratch above them;
// then per node in graph order the kernel pass lower emits for it (compiler::lower_node), e.g.
//   matmul          compiler::emit_gemm (kernels/gemm.h: tiled through HBM, weights double
//                   buffered)
//   conv2d          compiler::emit_conv2d (kernels_conv.h: padded copy in HBM scratch, GEMMs
//                   over chunks of output lines whose im2col rows are DMA'd from it straight
//                   into vector memory), its straight DMA stretches rolled into loops
//   layer_norm, softmax, batch_matmul, scale, permute   the transformer kernels
//                   (compiler/lower_transformer.cpp: row kernels on the vector and reduce units
//                   and the EUP, one GEMM per batch, transposed operands through the transpose
//                   unit, permutes by DMA)
//   add, relu       streamed vector-unit kernels
// then the final halt (after every DMA completed). Errors: tessera::Error naming the tensor and
// the sizes when the values or the scratch do not fit the core's HBM, a kernel's tile its vector
// memory, or the code its instruction memory; an op the compiler has no kernel for.
#pragma once

#include <cstdint>
#include <map>

#include "core/spec.h"
#include "graph/graph.h"
#include "isa/image.h"

namespace tessera::suite {

struct RowProgram {
  isa::Program program;        // code and DMA descriptors; the inputs are the caller's to add
  std::map<int, int64_t> hbm;  // value id -> HBM word address
  int64_t hbm_words = 0;       // the footprint, scratch included
};

RowProgram row_program(const graph::Graph& g, const core::CoreSpec& spec);

}  // namespace tessera::suite
