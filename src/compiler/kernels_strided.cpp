// Strided data movement and sum_to (kernels_strided.h).
#include "compiler/kernels_strided.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"
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

// The fold's registers: accumulators from v8, the rows loaded per loop trip after them; the
// scalar cursor over the rows in vector memory is kRegCursor.
constexpr int kFoldVregs = 8;  // accumulators per column block, and rows x vregs per trip
constexpr int kFoldAcc = kConstRegs, kFoldRow = kConstRegs + kFoldVregs;

// One column block of the fold: out[k0, k0 + cols) = init, then combine(out, row r's columns)
// for the R rows of `rows` ([R, K] in HBM) in order. Each row's columns go to P = ceil(cols /
// lanes) vector-memory rows of their own (a 2-D DMA pads them to P whole rows), so row r's
// column c sits in accumulator c / (S lanes) at the same sublane and lane: the fold of one row is
// V = ceil(P / S) vld + combine pairs. The rows arrive in chunks that fill vector memory; per
// chunk a counted loop folds U = kFoldVregs / V rows per trip (their loads first, then the
// combines in row order), the rows past the last whole trip straight after it. A vld reads
// S sublanes from a row's first vector-memory row, so for P < S it also reads the next rows
// (or up to V * S - P rows past the chunk): those sublanes hold other rows' values, never
// stored back. Code size: constant per chunk, whatever R.
void fold_columns(Codegen& cg, const std::string& name, int64_t rows, int64_t R, int64_t K,
                  int64_t k0, int64_t cols, int64_t out, Opcode combine, int32_t init_bits) {
  const core::CoreSpec& spec = cg.spec();
  const int64_t S = spec.sublanes, L = spec.lanes;
  const int64_t P = (cols + L - 1) / L, V = (P + S - 1) / S,
                U = std::max<int64_t>(1, kFoldVregs / V);
  // Vector memory: the chunk's rows [0, n P), V S - P rows the last vld reads past them, then
  // the accumulators' V S rows.
  const int64_t per_chunk = (spec.vmem_rows() - 2 * V * S + P) / P;
  if (per_chunk < 1)
    throw Error("compiler", "tensor '" + name + "': a row of " + std::to_string(cols) +
                                " words and its running result do not fit vector memory (" +
                                std::to_string(spec.vmem_rows()) + " rows of " + std::to_string(L) +
                                " words)");
  const bool dense = cols == K && cols == P * L;  // the rows are contiguous, unpadded
  for (int64_t v = 0; v < V; ++v) cg.op(Opcode::VBCASTI, kFoldAcc + v, 0, 0, 0, init_bits);
  // Folds `count` rows from the cursor's row on (the loaded row u, vreg v in kFoldRow + u V + v).
  const auto fold = [&](int64_t count, int64_t chunk_rows) {
    for (int64_t u = 0; u < count; ++u)
      for (int64_t v = 0; v < V; ++v)
        cg.op_rows(Opcode::VLD, static_cast<int>(kFoldRow + u * V + v), kRegCursor, 0, 0,
                   static_cast<int32_t>(u * P + v * S), 0, chunk_rows - 1);
    for (int64_t u = 0; u < count; ++u)
      for (int64_t v = 0; v < V; ++v)
        cg.op(combine, static_cast<int>(kFoldAcc + v), static_cast<int>(kFoldAcc + v),
              static_cast<int>(kFoldRow + u * V + v));
  };
  for (int64_t r0 = 0; r0 < R; r0 += per_chunk) {
    const int64_t n = std::min(per_chunk, R - r0);
    const int64_t chunk_rows = n * P + V * S - P;
    cg.em().barrier();  // the previous chunk's loads are issued before the DMA overwrites them
    if (dense)
      cg.dma(Opcode::DMAHV, 0, rows + r0 * K, n * K);
    else
      cg.dma(Opcode::DMAHV2, 0, rows + r0 * K + k0, cg.descriptor(n, cols, K, P * L));
    cg.wait_dmas();
    cg.sli(kRegCursor, 0);
    const int64_t trips = n / U;
    if (trips > 1) cg.loop_begin(trips);
    if (trips > 0) {
      fold(U, chunk_rows);
      cg.op(Opcode::SADDI, kRegCursor, kRegCursor, 0, 0, static_cast<int32_t>(U * P));
    }
    if (trips > 1) cg.loop_end();
    fold(n % U, chunk_rows);
  }
  const int64_t acc_row = spec.vmem_rows() - V * S;
  for (int64_t v = 0; v < V; ++v) cg.vst(static_cast<int>(kFoldAcc + v), acc_row + v * S);
  cg.em().barrier();
  cg.dma(Opcode::DMAVH, out + k0, acc_row * L, cols);
  cg.wait_dmas();
}

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
  // Columns are independent: blocks of at most kFoldVregs accumulators each fold every row.
  const int64_t block = kFoldVregs * cg.words_per_vreg();
  for (int64_t k0 = 0; k0 < r.K; k0 += block)
    fold_columns(cg, name, r.rows, r.R, r.K, k0, std::min(block, r.K - k0), out, combine,
                 init_bits);
}

void emit_sum_to(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                 const std::vector<int64_t>& big, const std::vector<int64_t>& small, int64_t out) {
  emit_reduce_to(cg, scratch, name, x, big, small, out, Opcode::VADDF, 0);
}

}  // namespace tessera::compiler
