#include "compiler/kernels_permute.h"

#include <algorithm>

#include "common/error.h"

namespace tessera::compiler {

using isa::Opcode;

void emit_permute(Codegen& cg, const std::string& name, int64_t x, int64_t y,
                  const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const size_t r = dims.size();
  TESSERA_CHECK(r >= 2 && perm.size() == r, "permute: rank");
  std::vector<int64_t> stride(r, 1), out(r), src(r);  // x's strides; y's dims and their x strides
  for (size_t d = r - 1; d-- > 0;) stride[d] = stride[d + 1] * dims[d + 1];
  for (size_t i = 0; i < r; ++i) {
    out[i] = dims[static_cast<size_t>(perm[i])];
    src[i] = stride[static_cast<size_t>(perm[i])];
  }
  // One DMA moves `count` pieces of `chunk` words; the odometer runs over y's dims [0, outer).
  const bool last_kept = perm[r - 1] == static_cast<int64_t>(r - 1);
  const size_t outer = last_kept ? r - 2 : r - 1;
  TESSERA_CHECK(outer >= 1, "permute: the identity of two dims is a copy");
  const int64_t chunk = last_kept ? out[r - 1] : 1, count = out[outer];
  const int64_t piece_stride = src[outer];
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  const int64_t slice = total / out[0];  // words of one index of y's first dim
  const int64_t vmem_words = cg.spec().vmem_rows() * cg.spec().lanes;
  const int64_t per_chunk = std::min(out[0], vmem_words / slice);
  if (per_chunk < 1)
    throw Error("compiler", "tensor '" + name + "': a slice of " + std::to_string(slice) +
                                " words does not fit vector memory (" + std::to_string(vmem_words) +
                                " words)");
  const uint32_t desc = cg.descriptor(count, chunk, piece_stride, chunk);
  const int64_t run = count * chunk;  // words per DMA
  for (int64_t s0 = 0; s0 < out[0]; s0 += per_chunk) {
    const int64_t ns = std::min(per_chunk, out[0] - s0);
    std::vector<int64_t> idx(outer, 0);
    idx[0] = s0;
    for (int64_t w = 0; w < ns * slice; w += run) {
      int64_t from = x;
      for (size_t i = 0; i < outer; ++i) from += idx[i] * src[i];
      cg.dma(Opcode::DMAHV2, w, from, desc);
      for (size_t i = outer; i-- > 0;) {  // odometer over y's outer dims
        if (++idx[i] < out[i]) break;
        idx[i] = 0;
      }
    }
    cg.wait_dmas();
    cg.dma(Opcode::DMAVH, y + s0 * slice, 0, ns * slice);
    cg.wait_dmas();
  }
}

}  // namespace tessera::compiler
