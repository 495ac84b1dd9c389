#include "compiler/kernels_permute.h"

#include <algorithm>

#include "common/error.h"

namespace tessera::compiler {

using isa::Opcode;

void emit_permute(Codegen& cg, const std::string& name, int64_t x, int64_t y,
                  const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const size_t r = dims.size();
  TESSERA_CHECK(r >= 2 && perm.size() == r, "permute: rank");
  // x's strides; y's dims, their strides in y and in x
  std::vector<int64_t> stride(r, 1), out(r), ostride(r, 1), src(r);
  for (size_t d = r - 1; d-- > 0;) stride[d] = stride[d + 1] * dims[d + 1];
  for (size_t i = 0; i < r; ++i) {
    out[i] = dims[static_cast<size_t>(perm[i])];
    src[i] = stride[static_cast<size_t>(perm[i])];
  }
  for (size_t d = r - 1; d-- > 0;) ostride[d] = ostride[d + 1] * out[d + 1];
  // One DMA moves `count` pieces of `chunk` words along y's dim `along` (the longest of dims 1..,
  // past the chunk); the other dims are counted by an odometer whose innermost dim is the longest
  // (long periodic runs of DMAs, which the emitter rolls into loops).
  const bool last_kept = perm[r - 1] == static_cast<int64_t>(r - 1);
  const size_t dims_left = last_kept ? r - 1 : r;
  TESSERA_CHECK(dims_left >= 2, "permute: the identity of two dims is a copy");
  const int64_t chunk = last_kept ? out[r - 1] : 1;
  size_t along = 1;
  for (size_t i = 2; i < dims_left; ++i)
    if (out[i] > out[along]) along = i;
  std::vector<size_t> loop;  // odometer dims, outermost first; dim 0 (the chunked one) first
  for (size_t i = 1; i < dims_left; ++i)
    if (i != along) loop.push_back(i);
  std::stable_sort(loop.begin(), loop.end(), [&](size_t a, size_t b) { return out[a] < out[b]; });
  loop.insert(loop.begin(), 0);
  const int64_t slice = ostride[0];  // words of one index of y's first dim
  const int64_t vmem_words = cg.spec().vmem_rows() * cg.spec().lanes;
  const int64_t per_chunk = std::min(out[0], vmem_words / slice);
  if (per_chunk < 1)
    throw Error("compiler", "tensor '" + name + "': a slice of " + std::to_string(slice) +
                                " words does not fit vector memory (" + std::to_string(vmem_words) +
                                " words)");
  const uint32_t desc = cg.descriptor(out[along], chunk, src[along], ostride[along]);
  for (int64_t s0 = 0; s0 < out[0]; s0 += per_chunk) {
    const int64_t ns = std::min(per_chunk, out[0] - s0);
    std::vector<int64_t> idx(r, 0);
    idx[0] = s0;
    for (bool more = true; more;) {
      int64_t from = x, to = -s0 * ostride[0];
      for (size_t d : loop) {
        from += idx[d] * src[d];
        to += idx[d] * ostride[d];
      }
      // Nested rolling: every DMA in the same registers, so the odometer's runs roll into loops.
      if (cg.em().nested_rolling()) cg.restart_pools();
      cg.dma(Opcode::DMAHV2, to, from, desc);
      more = false;
      for (size_t k = loop.size(); k-- > 0;) {  // the odometer, innermost last in `loop`
        const size_t d = loop[k];
        if (++idx[d] < (d == 0 ? s0 + ns : out[d])) {
          more = true;
          break;
        }
        idx[d] = d == 0 ? s0 : 0;
      }
    }
    cg.wait_dmas();
    cg.dma(Opcode::DMAVH, y + s0 * slice, 0, ns * slice);
    cg.wait_dmas();
  }
}

}  // namespace tessera::compiler
