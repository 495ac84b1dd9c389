// Strided data movement and sum_to (kernels_strided.h).
#include "compiler/kernels_strided.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"
#include "compiler/kernels.h"
#include "compiler/kernels_pointwise.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// The same elements in the same order with dims of one dropped and dims merged where the outer
// one's stride is the inner one's span; at least one dim.
StridedView canonical(const StridedView& v) {
  StridedView c{v.base, {}, {}};
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] == 1) continue;
    if (!c.shape.empty() && c.strides.back() == v.strides[d] * v.shape[d]) {
      c.shape.back() *= v.shape[d];
      c.strides.back() = v.strides[d];
      continue;
    }
    c.shape.push_back(v.shape[d]);
    c.strides.push_back(v.strides[d]);
  }
  if (c.shape.empty()) {
    c.shape.push_back(1);
    c.strides.push_back(1);
  }
  return c;
}

// Moves the view's elements between HBM and the dense HBM range at `dense` (gather: view ->
// dense; else dense -> view) through vector memory.
void move(Codegen& cg, const std::string& name, const StridedView& view, int64_t dense,
          bool gather) {
  StridedView v = canonical(view);
  const int64_t total = product(v.shape);
  if (v.shape.size() == 1 && v.strides[0] == 1) {  // one contiguous run
    if (gather)
      emit_copy(cg, name, v.base, dense, total);
    else
      emit_copy(cg, name, dense, v.base, total);
    return;
  }
  const bool runs = v.strides.back() == 1;  // pieces: contiguous runs of the last dim
  const int64_t piece = runs ? v.shape.back() : 1;
  if (runs && v.shape.size() == 1) {
    v.shape.insert(v.shape.begin(), 1);
    v.strides.insert(v.strides.begin(), 0);
  }
  const size_t dims = runs ? v.shape.size() - 1 : v.shape.size();  // the pieces' dims
  const std::vector<int64_t> vstride = dense_strides(v.shape);
  size_t along = 0;  // the DMAs run along the longest piece dim past the first (the chunked one)
  for (size_t d = 1; d < dims; ++d)
    if (along == 0 || v.shape[d] > v.shape[along]) along = d;
  const int64_t slice = vstride[0];
  const int64_t vmem_words = cg.spec().vmem_rows() * cg.spec().lanes;
  const int64_t per_chunk = std::min(v.shape[0], vmem_words / slice);
  if (per_chunk < 1)
    throw Error("compiler", "tensor '" + name + "': a slice of " + std::to_string(slice) +
                                " words does not fit vector memory (" + std::to_string(vmem_words) +
                                " words)");
  for (int64_t s0 = 0; s0 < v.shape[0]; s0 += per_chunk) {
    const int64_t ns = std::min(per_chunk, v.shape[0] - s0);
    const int64_t count = along == 0 ? ns : v.shape[along];
    const uint32_t desc = gather ? cg.descriptor(count, piece, v.strides[along], vstride[along])
                                 : cg.descriptor(count, piece, vstride[along], v.strides[along]);
    if (!gather) {
      cg.dma(Opcode::DMAHV, 0, dense + s0 * slice, ns * slice);
      cg.wait_dmas();
    }
    std::vector<int64_t> idx(dims, 0);
    idx[0] = s0;
    for (bool more = true; more;) {
      int64_t hbm = v.base, vmem = -s0 * slice;
      for (size_t d = 0; d < dims; ++d) {
        hbm += idx[d] * v.strides[d];
        vmem += idx[d] * vstride[d];
      }
      if (gather)
        cg.dma(Opcode::DMAHV2, vmem, hbm, desc);
      else
        cg.dma(Opcode::DMAVH2, hbm, vmem, desc);
      more = false;
      for (size_t d = dims; d-- > 0;) {  // the odometer over the piece dims but `along`
        if (d == along) continue;
        if (++idx[d] < (d == 0 ? s0 + ns : v.shape[d])) {
          more = true;
          break;
        }
        idx[d] = d == 0 ? s0 : 0;
      }
    }
    cg.wait_dmas();
    if (gather) {
      cg.dma(Opcode::DMAVH, dense + s0 * slice, 0, ns * slice);
      cg.wait_dmas();
    }
  }
}

// Rows combined per group of one stream (the stream holds them, the running result and the
// result).
constexpr int64_t kSumGroup = 8;

}  // namespace

std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

void emit_gather(Codegen& cg, const std::string& name, const StridedView& src, int64_t dst) {
  move(cg, name, src, dst, true);
}

void emit_scatter(Codegen& cg, const std::string& name, int64_t src, const StridedView& dst) {
  move(cg, name, dst, src, false);
}

ReducedRows arrange_reduced(Codegen& cg, HbmScratch& scratch, int64_t& at, const std::string& name,
                            int64_t x, const std::vector<int64_t>& big,
                            const std::vector<int64_t>& small) {
  // x as [R, K]: the reduced dims (small's 1 where big's is not, or absent) then the kept ones.
  const size_t off = big.size() - small.size();
  const std::vector<int64_t> xs = dense_strides(big);
  ReducedRows r{x, 0, product(small), false, StridedView{x, {}, {}}};
  std::vector<size_t> kept;
  for (size_t d = 0; d < big.size(); ++d) {
    if (big[d] == 1) continue;
    if (d >= off && small[d - off] == big[d]) {
      kept.push_back(d);
      continue;
    }
    r.gathered = r.gathered || !kept.empty();  // a reduced dim after a kept one
    r.arranged.shape.push_back(big[d]);
    r.arranged.strides.push_back(xs[d]);
  }
  r.R = product(r.arranged.shape);
  for (size_t d : kept) {
    r.arranged.shape.push_back(big[d]);
    r.arranged.strides.push_back(xs[d]);
  }
  if (r.gathered) {
    r.rows = scratch_take(scratch, at, r.R * r.K, name + ".arranged");
    emit_gather(cg, name + ".arranged", r.arranged, r.rows);
  }
  return r;
}

void emit_reduce_to(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                    const std::vector<int64_t>& big, const std::vector<int64_t>& small, int64_t out,
                    isa::Opcode combine, int32_t init_bits) {
  int64_t at = 0;
  const ReducedRows r = arrange_reduced(cg, scratch, at, name, x, big, small);
  // out = ((init op row 0) op row 1) op ...: groups of rows streamed with the running result.
  for (int64_t r0 = 0; r0 < r.R; r0 += kSumGroup) {
    const int64_t n = std::min(kSumGroup, r.R - r0);
    std::vector<StreamIn> ins;
    if (r0 > 0) ins.push_back({out, false});
    for (int64_t k = r0; k < r0 + n; ++k) ins.push_back({r.rows + k * r.K, false});
    emit_stream(
        cg, name, r.K, 1, ins, {out},
        [first = r0 == 0, combine](Codegen& c, const std::vector<int>& in) {
          int acc = first ? 0 : in[0];
          for (size_t i = first ? 0 : 1; i < in.size(); ++i) {
            const int v = c.vreg();
            c.op(combine, v, acc, in[i]);
            acc = v;
          }
          return std::vector<int>{acc};
        },
        [init_bits](Codegen& c) { c.op(Opcode::VBCASTI, 0, 0, 0, 0, init_bits); });
  }
}

void emit_sum_to(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                 const std::vector<int64_t>& big, const std::vector<int64_t>& small, int64_t out) {
  emit_reduce_to(cg, scratch, name, x, big, small, out, Opcode::VADDF, 0);
}

}  // namespace tessera::compiler
