// The matrix unit (MXU): an R x C weight-stationary systolic array of bf16 multipliers with fp32
// accumulation, a weight staging tile (double buffering), accumulator blocks and a result FIFO.
//
// Function (numerics/matmul.h defines the arithmetic):
//   mlw  v      rows v[0..sublanes)[0..C) become the next weight rows W[k][0..C) of the staging
//               tile (rounded to bf16), k counting 0..R-1 over successive mlw since the last flip.
//   mflip       the staged tile (all R rows) becomes the active tile.
//   mmul v      out[s][n] = sum_k bf16(v[s][k]) * W[k][n], k < R, s < sublanes; into the FIFO.
//   mmul.st     the same block is written to accumulator block b (chain starts at +0).
//   mmul.acc    the chain continues from accumulator block b's values (K > R needs no vector adds).
//   mmul.acc.out as mmul.acc, then a copy of block b goes into the result FIFO.
//   mpop v      v[s][n] = oldest FIFO block (n < C), v[s][n >= C] = 0.
//
// Timing (the fast model; tests/mxu check it against a cycle-by-cycle PE model):
//   * Weights shift in one row per cycle: an mlw occupies the shift path for `sublanes` cycles, so
//     a tile takes R cycles. mlw waits for the shift path. The first mlw of a tile also waits until
//     no input in flight uses the registers it shifts into: with double buffering off (one weight
//     register per PE) every result so far has left the array; with it on (two registers per PE,
//     ping-pong) every input pushed before the last mflip has.
//   * mflip waits until the staged tile has finished shifting in ("weight tile not loaded").
//   * mmul feeds its `sublanes` rows on consecutive cycles (the serialiser) once the input port is
//     free; a row entering at cycle e has its last column's result out at e + R + C - 2, and the
//     block may be popped from cycle (entry of its last row) + R + C - 1.
//   * So with double buffering off, a K x N weight matrix and M input rows take
//     ceil(K/R) * ceil(N/C) * (2R + C + M - 2) cycles from the first weight row shifted in to the
//     last result out, when the program issues each op as early as the unit allows.
// Term-serial PEs (spec.mxu_pe == MxuPe::TermSerial, core/term_mxu_spec.h): the same ops, weight
//   tile, staging and FIFO rules; an mmul's values are numerics::term_matmul_accumulate's (M =
//   sublanes, K = R, N = C; mmul.acc* continue from the block's fp32 values). Its output blocks
//   (tile_rows x tile_cols each, m-major) are dealt round-robin to `tiles` tiles; each tile runs
//   its blocks in lockstep one after the other, so the input port is busy for
//     occupancy = max over tiles of (sum of its blocks' cycles) + push_cycles   (at least 1),
//   and the last result leaves at start + occupancy - 1 + latency_cycles.
// Faults (UnitFault): mlw into a full staging tile; mflip of an incomplete tile; mmul with no
//   active tile, or (no double buffering) while a tile is shifting in; a push that would overflow
//   the result FIFO (only a pop can make room, so the program could never have waited); mpop with
//   nothing pushed; an accumulator block out of range.
#pragma once

#include <cstdint>
#include <vector>

#include "core/spec.h"
#include "core/zeroed_array.h"

namespace tessera::core {

enum class MmulMode { ToFifo, Store, Accumulate, AccumulateOut };

struct MxuStats {
  int64_t tiles_loaded = 0;         // mflip count
  int64_t weight_rows = 0;          // rows shifted in
  int64_t pushes = 0;               // mmul* count
  int64_t macs = 0;                 // pushes * sublanes * R * C
  int64_t busy_cycles = 0;          // cycles the input port streamed rows
  int64_t first_weight_cycle = -1;  // first cycle a weight row shifted in (-1: none yet)
  int64_t last_result_cycle = -1;   // last cycle a result left the array (-1: none yet)
  numerics::TermMatmulStats term;   // term-serial PEs only: terms, steps, lockstep cycles, stalls
  int64_t term_tile_imbalance =
      0;  // term-serial: sum over pushes of (busiest tile x tiles - all tiles' cycles)
  // Adds another MXU's counters (the totals of several MXUs): counts add, the first weight cycle
  // is the earliest and the last result cycle the latest (so span() covers both).
  MxuStats& operator+=(const MxuStats& o);
  // The MXU's span: first weight row in to last result out, inclusive (0 if unused).
  int64_t span() const {
    return first_weight_cycle < 0 || last_result_cycle < 0
               ? 0
               : last_result_cycle - first_weight_cycle + 1;
  }
};

class Mxu {
 public:
  explicit Mxu(const CoreSpec& spec);

  // Earliest cycle >= now at which the op could issue, from this unit's state alone.
  int64_t mlw_ready(int64_t now) const;
  int64_t mflip_ready(int64_t now) const;
  int64_t mmul_ready(int64_t now) const;
  int64_t mpop_ready(int64_t now) const;

  // Perform the op at cycle `now` (>= its *_ready). `v` is one vreg: sublanes x lanes fp32,
  // row-major. Throw UnitFault on misuse.
  void mlw(const float* v, int64_t now);
  void mflip(int64_t now);
  void mmul(const float* v, MmulMode mode, int64_t acc_block, int64_t now);
  void mpop(float* v, int64_t now);

  // Checks done before any state changes (so a faulting bundle changes nothing).
  void check_mlw() const;
  void check_mflip() const;
  void check_mmul(MmulMode mode, int64_t acc_block) const;
  void check_mpop() const;

  // Makes the accumulators resident now (ZeroedArray::commit) instead of page by page as mmuls
  // first write them: for a caller that times a run. Their contents are unchanged.
  void commit_accumulators() { m_acc.commit(); }

  int fifo_occupancy() const { return m_fifo_count; }
  // Cycles the input port was busy with the last mmul (sublanes for bf16 PEs).
  int64_t last_mmul_occupancy() const { return m_last_occupancy; }
  const MxuStats& stats() const { return m_stats; }
  // Term-serial PEs: the accumulator width (fraction bits) of the following mmuls (per-layer
  // widths: core/mxu_attribution.h); the spec's core.mxu.term.acc_width until changed.
  void set_term_acc_width(int bits) { m_spec.term.tile.pe.acc_fraction_bits = bits; }
  int term_acc_width() const { return m_spec.term.tile.pe.acc_fraction_bits; }

 private:
  // The result FIFO is a ring of `mxu_result_fifo` preallocated blocks (sublanes x C each):
  // no allocation per push.
  float* fifo_block(int slot) { return &m_fifo_values[static_cast<size_t>(slot) * m_block_size]; }
  float* fifo_push(int64_t ready);  // claims the next slot; returns its storage
  // Term-serial PEs: out += m_in x active tile; returns the port occupancy (rule above).
  int64_t term_mmul(float* out);
  // Bit-parallel PEs: out += m_in x active tile, over the tile's nonzero extent when that gives
  // the same bits as the whole array (rule in mxu.cpp).
  void bf16_mmul(float* out, bool fresh);

  CoreSpec m_spec;      // a copy: the unit must not outlive a caller's temporary spec
  int m_rows_per_push;  // = sublanes
  std::vector<float> m_staging, m_active;  // R x C, bf16 values held as fp32
  int m_staged_rows = 0;
  // The nonzero extent of a tile: every weight in a row >= rows or a column >= cols is +-0.
  struct Extent {
    int rows = 0, cols = 0;
  };
  Extent m_staging_extent, m_active_extent;
  bool m_have_active = false;
  int64_t m_shift_free = 0;           // first cycle the weight shift path is free
  int64_t m_input_free = 0;           // first cycle the input port is free
  int64_t m_drained = 0;              // first cycle after the last in-flight result left the array
  int64_t m_staging_free = 0;         // first cycle no input in flight uses the staging buffer
  ZeroedArray<float> m_acc;           // acc_blocks x sublanes x C (pages committed when used)
  std::vector<float> m_in;            // scratch: one input block rounded to bf16 (sublanes x R)
  std::vector<float> m_start;         // scratch: an accumulator block's values before an mmul
  size_t m_block_size;                // sublanes x C
  std::vector<float> m_fifo_values;   // result_fifo blocks
  std::vector<int64_t> m_fifo_ready;  // per slot: first cycle its block may be popped
  int m_fifo_head = 0, m_fifo_count = 0;
  MxuStats m_stats;
  int64_t m_last_occupancy = 0;
  std::vector<int64_t> m_block_cycles,
      m_tile_cycles;  // term-serial scratch: per output block, per tile
};

}  // namespace tessera::core
