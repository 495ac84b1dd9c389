// The program of a suite row on one core, built by the compiler's kernels: every graph value at
// an HBM word address (the inputs in graph order, then each node's output, each starting on a
// 1024-word boundary), the kernels' scratch above them; one kernel per node in graph order:
//   matmul   compiler::emit_gemm (kernels/gemm.h: tiled through HBM, weights double buffered)
//   conv2d   compiler::emit_conv2d (kernels_conv.h: padded copy and im2col in HBM scratch, one
//            GEMM), its straight DMA stretches rolled into loops as pass lower does
// then the final halt (after every DMA completed). Errors: tessera::Error naming the tensor and
// the sizes when the values or the scratch do not fit the core's HBM, or the code its instruction
// memory; an op without a kernel here.
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
