// GEMM kernel generator: a complete tensor-core program computing C[M x N] = A[M x K] * B[K x N]
// through the MXU, for any shape and any CoreSpec whose vector memory and instruction memory can
// hold it.
//
// Data: A, B and C are row-major fp32 in HBM (word addresses in GemmPlan). The result is exactly
// numerics::mxu_matmul_accumulate over the full K (inputs rounded to bf16, one fp32 fma chain per
// output, k ascending), because K tiles continue the chain through the accumulator blocks
// (mmul.st, mmul.acc, mmul.acc.out). K is padded to the array with zeros (which adds +0 terms:
// the value is unchanged unless a chain result is -0, which then reads +0), N and M are padded and
// the padding is never stored.
//
// Schedule (generated as straight-line code, every address an immediate, s0 holding 0; then its
// periodic stretches are rolled into counted loops by kernels/loop_roll.h):
//   * M is cut into chunks of Mb rows (Mb <= acc_blocks * sublanes, and vector memory must hold the
//     chunk's A panel); per chunk, per group of N tiles, per K tile (fastest) one weight tile is
//     loaded into each MXU and all Mb rows are pushed ("steps": two bundles per push and MXU, A
//     and B). With U = core.mxu.count MXUs a group is U consecutive N tiles, MXU u taking the
//     u-th: the MXUs get the same input vreg in the same step (one vector load feeds all), each
//     its own weights, accumulator chain and result FIFO, so each output is computed by exactly
//     one MXU and the value is the one-MXU value. A ragged last group leaves MXUs idle.
//   * A panels (Mb x K, one vector-memory region per K tile) are DMA'd from HBM with 2-D DMAs,
//     double buffered: chunk c+1's regions stream in during chunk c.
//     When even an S-row panel does not fit (K in the hundreds of thousands, e.g. a weight
//     gradient whose K is batch x height x width), the panel streams instead (GemmPlan::
//     panel_ring): each group's K step gets its A region through a ring in vector memory, DMA'd
//     a few K steps ahead and waited for before the step's first input load. The MXU work and
//     the values are the same; A is read from HBM once per group of N tiles.
//   * Weight tiles are DMA'd 2-3 tiles ahead into a ring of 3 vector-memory slots (plus 3 slots
//     for the ragged last K tile, so its padding rows stay zero).
//   * Double buffering on: the next tile's mlw ops ride in the B bundles of the current tile's last
//     R/S pushes, and `mflip` shares the A bundle of the next tile's first push, so the array
//     streams rows back to back. Off: each tile's mlw ops follow the previous tile's pushes (the
//     first waits until the array drained), so the MXU span is the published formula.
//   * Input and weight vregs are loaded two steps ahead; result blocks are popped D pushes behind
//     (D < result_fifo, about the array's latency in pushes), stored, and each finished C tile is
//     DMA'd back to HBM (two output regions per MXU, double buffered).
//   * The regular schedule (nested rolling): every group of N tiles has the same code but for
//     affine immediates, so that loop rolling folds the K steps into a loop and the groups into an
//     outer one. The input and weight vreg rotations restart per tile (5 registers: any three
//     consecutive uses differ across a tile boundary too); the full tiles' weights cycle through
//     a ring of 4 slots per MXU in Gray-code order, their rows bit fields of one aligned block,
//     and the loads and DMAs reach them through registers moved on by `sxori`, the DMA's HBM
//     source by `saddi`, so no slot number shows in an immediate (the ragged last K tile keeps
//     two slots of its own, addressed by immediates). The popped results rotate over 5 registers
//     restarted per tile too, and the output regions are reached through two registers (rows for
//     the stores, words for the output DMAs) toggled between groups of N tiles, so consecutive
//     groups have the same code. The code repeats every two K steps; within a tile every three
//     pushes (the roller's loops over them take their weight rows from the slot register,
//     RollOptions::register_bases).
//     Values are those of the straight schedule (the same ops in the same order per MXU).
// Errors: tessera::Error when the shape cannot fit (vector memory, instruction memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/spec.h"
#include "core/state.h"
#include "isa/image.h"

namespace tessera::kernels {

struct GemmPlan {
  int M = 0, K = 0, N = 0;
  int R = 0, C = 0, S = 0;     // array rows, columns, sublanes
  int Mb = 0;                  // rows per M chunk (multiple of S)
  int MC = 0, KT = 0, NT = 0;  // chunks, K tiles, N tiles
  int units = 1;               // MXUs (core.mxu.count) the N tiles are spread over
  int64_t tiles = 0;           // weight tiles loaded: MC * NT * KT
  // 0, or the A panel is streamed: when a chunk's whole panel (Mb x K) does not fit vector
  // memory, its K tiles pass through a ring of this many regions, one DMA per K step of every
  // group of N tiles (A is read once per group), so K is bounded by HBM alone.
  int panel_ring = 0;
  int64_t a_hbm = 0, b_hbm = 0, c_hbm = 0;  // word addresses
  bool double_buffer = true;
  // Vector-memory rows [0, load_rows) its loads read, [0, vmem_rows) its loads and stores touch.
  int64_t load_rows = 0, vmem_rows = 0;
  int64_t loops = 0;  // counted loops in the code (kernels/loop_roll.h)
  // The published weight-stationary formula summed over the M chunks (each padded to S), the
  // MXUs working in parallel: sum_c KT * ceil(NT / units) * (2R + C + Mp_c - 2); for one chunk
  // and one MXU, ceil(K/R)*ceil(N/C)*(2R+C+M-2).
  int64_t formula_cycles = 0;
  int64_t macs() const { return static_cast<int64_t>(M) * K * N; }
};

struct GemmProgram {
  isa::Program program;  // code + scalar-memory DMA descriptors (no operands: add_gemm_operands)
  GemmPlan plan;
};

// `loops` false: the straight-line code, no loops rolled (its single-buffered MXU span is exactly
// the formula; loops add their taken-branch cycles when the MXU waits for issue).
GemmProgram make_gemm(const core::CoreSpec& spec, int M, int K, int N, bool loops = true);

// Where a GEMM embedded in a larger program keeps its operands (HBM word addresses) and its DMA
// descriptors (scalar memory from word smem_base). The code still uses vector memory from row 0,
// flags 0..2 and any register; every DMA it issues is waited for before its final halt.
struct GemmPlacement {
  int64_t a_hbm = 0, b_hbm = 0, c_hbm = 0;
  int64_t smem_base = 0;
  // A is already in vector memory, put there by the caller as the one chunk's panel, row by row:
  // row r of A at words [r * KT * R, r * KT * R + K) (rows padded to whole K tiles, so K tile kt
  // of row r is vector-memory row r * KT + kt; the GEMM reads a push's rows with a strided load).
  // The GEMM issues no A DMAs (a_hbm is unused); M must be at most gemm_panel_rows(spec, K).
  bool a_in_vmem = false;
};

// The most rows M (a multiple of the sublanes; 0 if none) whose A panel of K columns a GEMM holds
// in vector memory as one chunk, beside its weight and output buffers.
int gemm_panel_rows(const core::CoreSpec& spec, int K);
// `nested`: the regular schedule (above), rolled with loops inside loops (RollOptions::nested)
// when `loops`. With `loops` and not `nested`, a program whose one-level rolling does not fit
// instruction memory is generated again as with `nested`.
GemmProgram make_gemm(const core::CoreSpec& spec, int M, int K, int N, const GemmPlacement& at,
                      bool loops = true, bool nested = false);

// Appends A (M x K) and B (K x N) as HBM data segments at the plan's addresses.
void add_gemm_operands(isa::Program& program, const GemmPlan& plan, const float* a, const float* b);

// C (M x N) from HBM after a run.
std::vector<float> read_gemm_result(const core::ArchState& state, const GemmPlan& plan);

}  // namespace tessera::kernels
