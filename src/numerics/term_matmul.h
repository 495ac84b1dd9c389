// A matmul block on a tile of term-serial PEs: the arithmetic helper behind the term-serial MXU.
//
// Same interface and data contract as numerics::mxu_matmul_accumulate (numerics/matmul.h):
//   acc[m*ldc + n] += sum_k a[m*lda + k] * w[k*ldw + n], a: M x K, w: K x N, row-major fp32
//   holding bf16 values (inputs that are not bf16 values are rounded to bf16 first).
// Arithmetic (numerics/term_pe/term_pe.h): output (m, n) is one PE's accumulator. It is loaded from
// acc[m][n] (accumulator_from_f32), then the PE takes steps over k = 0..L-1, L..2L-1, ... (k
// ascending in groups of L lanes; a last partial group is padded with +0 * +0), and the result is
// rounded once to fp32 (accumulator_to_f32). The serial (term-encoded) operand B is the input
// `a` (TermSerialOperand::Inputs, default: activations and gradients carry the zeros and small
// values that skipping exploits) or the weights `w`; the other operand is A (bit-parallel).
// Each PE has its own exponent block result (E of its own lanes and accumulator).
//
// Tile and timing: a tile is R x C PEs, PE (r, c) computing output (m0 + r, n0 + c); PEs of a row
// share their inputs a[m][.], PEs of a column share w[.][n]. Output blocks are taken n-major
// inside m (m0 = 0, R, ...; n0 = 0, C, ... inner). The tile moves in lockstep: one tile step (all
// PEs doing step j of their block) lasts max over its PEs of the PE's step cycles; PEs outside
// M x N (ragged edges) are idle and do not count. Pipeline fill/drain overheads are not included
// (the MXU timing model adds those).
#pragma once

#include <cstdint>

#include "numerics/term_pe/term_pe.h"

namespace tessera::numerics {

enum class TermSerialOperand { Inputs, Weights };

struct TermTileConfig {
  int rows = 8;  // R
  int cols = 8;  // C
  PeConfig pe;
  TermSerialOperand serial = TermSerialOperand::Inputs;

  void validate() const;  // throws tessera::Error naming the field
};

// Statistics of one call; plain counters that add up over calls (operator+=).
struct TermMatmulStats {
  int64_t macs = 0;             // M * K * N
  int64_t pe_steps = 0;         // steps of individual PEs (M * N * ceil(K / L))
  int64_t tile_steps = 0;       // lockstep steps of the tile
  int64_t cycles = 0;           // sum over tile steps of the slowest PE's step cycles
  int64_t terms_processed = 0;  // over all lanes of all PE steps
  int64_t terms_skipped_zero = 0;
  int64_t terms_skipped_oob = 0;
  int64_t pe_stall_cycles = 0;   // sum over PE steps of (tile step cycles - the PE's own cycles)
  int64_t lane_idle_cycles = 0;  // sum over lanes of PE steps of (PE step cycles - lane's terms)

  TermMatmulStats& operator+=(const TermMatmulStats& o);
  friend bool operator==(const TermMatmulStats&, const TermMatmulStats&) = default;
};

// The fast model (pre-decoded operands, TermPe's integer step). Adds to *stats if non-null. If
// block_cycles is non-null it receives each output block's lockstep cycles, ceil(M / rows) *
// ceil(N / cols) entries in block order (m0 outer, n0 inner).
void term_matmul_accumulate(const TermTileConfig& cfg, const float* a, int lda, const float* w,
                            int ldw, float* acc, int ldc, int M, int K, int N,
                            TermMatmulStats* stats, int64_t* block_cycles = nullptr);

// The same contract on reference_step, one PE step at a time: the oracle for tests.
void term_matmul_accumulate_reference(const TermTileConfig& cfg, const float* a, int lda,
                                      const float* w, int ldw, float* acc, int ldc, int M, int K,
                                      int N, TermMatmulStats* stats);

}  // namespace tessera::numerics
