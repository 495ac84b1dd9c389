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
  const int64_t table_rows = ceil_div(V * cpr + S - 1, S) * S;  // + slack for the last row's load
  const int64_t dy_base = table_rows;
  const int64_t fit = (spec.vmem_rows() - dy_base - S) / cpr;
  const int64_t k = std::min(ids_per_chunk(cg, name, n), fit);
  if (k < 1)
    throw Error("compiler", "tensor '" + name + "': the table of " + std::to_string(V) + " x " +
                                std::to_string(D) + " elements does not fit vector memory (" +
                                std::to_string(spec.vmem_rows()) + " rows of " + std::to_string(L) +
                                " words)");
  const int64_t smem = cg.reserve_smem(k);
  const int zero = cg.vreg();
  cg.op(Opcode::VBCASTI, zero, 0, 0, 0, 0);
  for (int64_t r = 0; r < table_rows; r += S) cg.vst(zero, r);
  const int sub = cg.vreg();
  cg.op(Opcode::VSUBLANEID, sub);
  cg.op(Opcode::VCMPEQI, 1, sub, zero);  // m1 = sublane 0
  const int id = cg.sreg(), row = cg.sreg();
  for (int64_t i0 = 0; i0 < n; i0 += k) {
    const int64_t nk = std::min(k, n - i0);
    cg.em().barrier();
    cg.dma(Opcode::DMAHS, smem, ids + i0, nk);
    cg.dma(Opcode::DMAHV2, dy_base * L, dy + i0 * D, cg.descriptor(nk, D, D, cpr * L));
    cg.wait_dmas();
    for (int64_t i = 0; i < nk; ++i) {
      cg.op(Opcode::SLD, id, kRegZero, 0, 0, static_cast<int32_t>(smem + i));
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
  cg.dma(Opcode::DMAVH2, out, 0, cg.descriptor(V, D, cpr * L, D));
  cg.wait_dmas();
}

}  // namespace tessera::compiler
