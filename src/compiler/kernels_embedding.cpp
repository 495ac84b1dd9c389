#include "compiler/kernels_embedding.h"

#include <algorithm>

#include "common/error.h"
#include "common/int_math.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

// Ids per chunk: what the scalar memory left after the program's data holds (at most 1024).
int64_t ids_per_chunk(Codegen& cg, const std::string& name, int64_t n) {
  const int64_t free = cg.spec().smem_words - cg.next_smem();
  const int64_t k = std::min({n, free, int64_t{1024}});
  if (k < 1) throw Error("compiler", "tensor '" + name + "': no scalar memory left for the ids");
  return k;
}

// Ids per chunk when the gradient's table goes through vector memory in chunks of rows (each
// chunk reads every id and dy row again).
constexpr int64_t kChunkedIds = 256;

}  // namespace

void emit_embedding(Codegen& cg, const std::string& name, int64_t table, int64_t ids, int64_t y,
                    int64_t n, int64_t D) {
  const int64_t vmem_words = cg.spec().vmem_rows() * cg.spec().lanes;
  const int64_t k = std::min(ids_per_chunk(cg, name, n), vmem_words / D);
  if (k < 1)
    throw Error("compiler", "tensor '" + name + "': a row of " + std::to_string(D) +
                                " elements does not fit vector memory");
  const int64_t smem = cg.reserve_smem(k);
  const int id = cg.sreg(), from = cg.sreg(), to = cg.sreg(), count = cg.sreg();
  cg.sli(count, D);
  for (int64_t i0 = 0; i0 < n; i0 += k) {
    const int64_t nk = std::min(k, n - i0);
    cg.dma(Opcode::DMAHS, smem, ids + i0, nk);
    cg.wait_dmas();
    for (int64_t i = 0; i < nk; ++i) {
      cg.op(Opcode::SLD, id, kRegZero, 0, 0, static_cast<int32_t>(smem + i));
      cg.op(Opcode::SMULI, from, id, 0, 0, static_cast<int32_t>(D));
      cg.op(Opcode::SADDI, from, from, 0, 0, static_cast<int32_t>(table));
      cg.sli(to, i * D);
      cg.dma_regs(Opcode::DMAHV, to, from, count);
    }
    cg.touch_rows(ceil_div(nk * D, cg.spec().lanes));
    cg.wait_dmas();
    cg.dma(Opcode::DMAVH, y + i0 * D, 0, nk * D);
    cg.wait_dmas();
  }
}

void emit_embedding_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t ids, int64_t out,
                         int64_t n, int64_t V, int64_t D) {
  const core::CoreSpec& spec = cg.spec();
  const int64_t S = spec.sublanes, L = spec.lanes, cpr = ceil_div(D, L);
  // The whole table and k dy rows, or else the table in chunks of tv rows beside k dy rows and a
  // discard row, which the ids outside the chunk add to.
  const auto rows_of = [&](int64_t table) { return ceil_div(table * cpr + S - 1, S) * S; };
  int64_t k = std::min(ids_per_chunk(cg, name, n), (spec.vmem_rows() - rows_of(V) - S) / cpr);
  int64_t tv = V;
  if (k < 1) {
    k = std::min<int64_t>(ids_per_chunk(cg, name, n), kChunkedIds);
    tv = (spec.vmem_rows() - k * cpr - 3 * S) / cpr - 1;
    if (tv < 1)
      throw Error("compiler", "tensor '" + name + "': a table row of " + std::to_string(D) +
                                  " elements and the gradient rows do not fit vector memory (" +
                                  std::to_string(spec.vmem_rows()) + " rows of " +
                                  std::to_string(L) + " words)");
  }
  const bool chunked = tv < V;
  const int64_t table_rows = rows_of(chunked ? tv + 1 : V);
  const int64_t dy_base = table_rows;
  const int64_t smem = cg.reserve_smem(k);
  int zero = -1, id = -1, row = -1, limit = -1, sign = -1, flip = -1;
  for (int64_t t0 = 0; t0 < V; t0 += tv) {
    const int64_t nt = std::min(tv, V - t0);
    zero = cg.vreg();  // again per chunk: the rotating pool has reused it since
    cg.op(Opcode::VBCASTI, zero, 0, 0, 0, 0);
    for (int64_t r = 0; r < table_rows; r += S) cg.vst(zero, r);
    if (t0 == 0) {
      const int sub = cg.vreg();
      cg.op(Opcode::VSUBLANEID, sub);
      cg.op(Opcode::VCMPEQI, 1, sub, zero);  // m1 = sublane 0
      id = cg.sreg(), row = cg.sreg();
      if (chunked) limit = cg.sreg(), sign = cg.sreg(), flip = cg.sreg();
    }
    for (int64_t i0 = 0; i0 < n; i0 += k) {
      const int64_t nk = std::min(k, n - i0);
      cg.em().barrier();
      cg.dma(Opcode::DMAHS, smem, ids + i0, nk);
      cg.dma(Opcode::DMAHV2, dy_base * L, dy + i0 * D, cg.descriptor(nk, D, D, cpr * L));
      cg.wait_dmas();
      if (chunked) cg.sli(limit, nt);  // the discard row's index (after the DMAs' registers)
      for (int64_t i = 0; i < nk; ++i) {
        cg.op(Opcode::SLD, id, kRegZero, 0, 0, static_cast<int32_t>(smem + i));
        if (chunked) {  // id - t0 when in [0, nt), else nt: min, then a negative one replaced
          cg.op(Opcode::SADDI, id, id, 0, 0, static_cast<int32_t>(-t0));
          cg.op(Opcode::SMIN, id, id, limit);
          cg.op(Opcode::SSRAI, sign, id, 0, 0, 31);
          cg.op(Opcode::SXOR, flip, id, limit);
          cg.op(Opcode::SAND, flip, flip, sign);
          cg.op(Opcode::SXOR, id, id, flip);
        }
        cg.op(Opcode::SMULI, row, id, 0, 0, static_cast<int32_t>(cpr));
        for (int64_t j = 0; j < cpr; ++j) {
          // The table row's address is known at run time only: its accesses cover the whole table.
          const int t = cg.vreg(), g = cg.vreg(), s = cg.vreg();
          cg.op_rows(Opcode::VLD, t, row, 0, 0, static_cast<int32_t>(j), 0, table_rows - 1);
          cg.vld(g, dy_base + i * cpr + j);
          cg.op(Opcode::VADDF, s, t, g);
          cg.op_rows(Opcode::VSTM, 0, s, row, 1, static_cast<int32_t>(j), 0, table_rows - 1);
        }
      }
    }
    cg.touch_rows(dy_base + k * cpr + S);
    cg.em().barrier();
    cg.dma(Opcode::DMAVH2, out + t0 * D, 0, cg.descriptor(nt, D, cpr * L, D));
    cg.wait_dmas();
  }
}

}  // namespace tessera::compiler
