// Both implementations run each PE over all its steps, recording the PE's cycles per step, then
// fold the tile's lockstep timing: a tile step lasts as long as its slowest PE's step.
#include "numerics/term_matmul.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "numerics/bf16.h"
#include "numerics/term_pe/reference.h"
#include "numerics/term_pe/scalar_step.h"
#include "numerics/term_pe/tile.h"

namespace tessera::numerics {

void TermTileConfig::validate() const {
  if (rows < 1 || rows > 4096)
    throw Error("TermTileConfig.rows", fmt::format("{} is out of range [1, 4096]", rows));
  if (cols < 1 || cols > 4096)
    throw Error("TermTileConfig.cols", fmt::format("{} is out of range [1, 4096]", cols));
  pe.validate();
}

TermMatmulStats& TermMatmulStats::operator+=(const TermMatmulStats& o) {
  macs += o.macs;
  pe_steps += o.pe_steps;
  tile_steps += o.tile_steps;
  cycles += o.cycles;
  terms_processed += o.terms_processed;
  terms_skipped_zero += o.terms_skipped_zero;
  terms_skipped_oob += o.terms_skipped_oob;
  pe_stall_cycles += o.pe_stall_cycles;
  lane_idle_cycles += o.lane_idle_cycles;
  return *this;
}

namespace {

void check_shape(int lda, int ldw, int ldc, int M, int K, int N) {
  TESSERA_CHECK(M >= 0 && K >= 0 && N >= 0, "term_matmul: negative shape");
  TESSERA_CHECK(lda >= K && ldw >= N && ldc >= N, "term_matmul: leading dimension too small");
}

// Folds per-PE step cycles (pe_cycles[p * steps + j] for the PEs p of one output block) into
// the tile's lockstep timing.
void fold_tile_timing(const std::vector<int>& pe_cycles, int pes, int steps, TermMatmulStats& st,
                      int64_t*& block_cycles) {
  const int64_t before = st.cycles;
  for (int j = 0; j < steps; ++j) {
    int slowest = 0;
    int64_t sum = 0;
    for (int p = 0; p < pes; ++p) {
      slowest = std::max(slowest, pe_cycles[static_cast<size_t>(p) * steps + j]);
      sum += pe_cycles[static_cast<size_t>(p) * steps + j];
    }
    st.cycles += slowest;
    st.pe_stall_cycles += static_cast<int64_t>(slowest) * pes - sum;
  }
  st.tile_steps += steps;
  if (block_cycles != nullptr) *block_cycles++ = st.cycles - before;
}

void add_lane_counts(const LaneTerms* lanes, int n, int step_cycles, TermMatmulStats& st) {
  for (int i = 0; i < n; ++i) {
    st.terms_processed += lanes[i].processed;
    st.terms_skipped_zero += lanes[i].skipped_zero;
    st.terms_skipped_oob += lanes[i].skipped_oob;
    st.lane_idle_cycles += step_cycles - lanes[i].processed;
  }
}

// Decoded operands, each PE's lanes contiguous: rows[m][k] = a[m][k], cols[n][k] = w[k][n], K
// padded to a multiple of L with +0.
struct Decoded {
  int kp = 0;
  std::vector<detail::TermOperand> rows, cols;
};

Decoded decode(const float* a, int lda, const float* w, int ldw, int M, int K, int N, int L) {
  Decoded d;
  d.kp = (K + L - 1) / L * L;
  d.rows.assign(static_cast<size_t>(M) * d.kp, detail::make_operand(Bf16{0}));
  d.cols.assign(static_cast<size_t>(N) * d.kp, detail::make_operand(Bf16{0}));
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k)
      d.rows[static_cast<size_t>(m) * d.kp + k] =
          detail::make_operand(bf16_from_f32(a[m * lda + k]));
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n)
      d.cols[static_cast<size_t>(n) * d.kp + k] =
          detail::make_operand(bf16_from_f32(w[k * ldw + n]));
  return d;
}

template <class Int>
void fast_blocks(const TermTileConfig& cfg, const Decoded& d, float* acc, int ldc, int M, int N,
                 TermMatmulStats& st, int64_t* block_cycles) {
  const PeConfig& pe = cfg.pe;
  const int L = pe.lanes;
  const int steps = d.kp / L;
  std::vector<int> pe_cycles(static_cast<size_t>(cfg.rows) * cfg.cols * steps);
  std::array<LaneTerms, kMaxPeLanes> lanes;
  for (int m0 = 0; m0 < M; m0 += cfg.rows) {
    for (int n0 = 0; n0 < N; n0 += cfg.cols) {
      const int rows = std::min(cfg.rows, M - m0), cols = std::min(cfg.cols, N - n0);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
          const detail::TermOperand* row = &d.rows[static_cast<size_t>(m0 + r) * d.kp];
          const detail::TermOperand* col = &d.cols[static_cast<size_t>(n0 + c) * d.kp];
          const detail::TermOperand* serial = cfg.serial == TermSerialOperand::Inputs ? row : col;
          const detail::TermOperand* parallel = cfg.serial == TermSerialOperand::Inputs ? col : row;
          float& out = acc[(m0 + r) * ldc + n0 + c];
          PeAccumulator state = accumulator_from_f32(out, pe);
          int* cycles = &pe_cycles[static_cast<size_t>(r * cols + c) * steps];
          for (int j = 0; j < steps; ++j) {
            const int tc = detail::fast_step<Int>(pe, parallel + j * L, serial + j * L, L, state,
                                                  lanes.data());
            cycles[j] = std::max(tc, pe.min_step_cycles);
            add_lane_counts(lanes.data(), L, cycles[j], st);
          }
          out = accumulator_to_f32(state, pe);
        }
      }
      fold_tile_timing(pe_cycles, rows * cols, steps, st, block_cycles);
      st.pe_steps += static_cast<int64_t>(rows) * cols * steps;
    }
  }
}

// The weights of the previous simd_blocks call on this thread and the shape they were decoded
// for. An MXU streams many pushes through one weight tile: while the weights are bit-identical
// (and M, K, N, L and the serial operand too) their decoded form in TileOperands is reused and
// only the inputs are decoded again.
struct DecodedWeights {
  std::vector<float> w;  // K x N, row-major
  int M = -1, K = -1, N = -1, lanes = -1;
  bool inputs_serial = false;

  bool matches(const float* w_in, int ldw, int M_, int K_, int N_, int lanes_,
               bool inputs_serial_) const {
    if (M != M_ || K != K_ || N != N_ || lanes != lanes_ || inputs_serial != inputs_serial_)
      return false;
    for (int k = 0; k < K; ++k)
      if (std::memcmp(&w[static_cast<size_t>(k) * N], w_in + static_cast<ptrdiff_t>(k) * ldw,
                      sizeof(float) * N) != 0)
        return false;
    return true;
  }
  void remember(const float* w_in, int ldw, int M_, int K_, int N_, int lanes_,
                bool inputs_serial_) {
    M = M_, K = K_, N = N_, lanes = lanes_, inputs_serial = inputs_serial_;
    w.resize(static_cast<size_t>(K) * N);
    for (int k = 0; k < K; ++k)
      std::memcpy(&w[static_cast<size_t>(k) * N], w_in + static_cast<ptrdiff_t>(k) * ldw,
                  sizeof(float) * N);
  }
};

// The vector tile: groups of up to 8 PEs sharing their serial operand (term_pe/tile.h). With the
// inputs serial a group is part of a tile row (PEs (r, c0..c0+7)), with the weights serial part of
// a tile column (PEs (r0..r0+7, c)).
void simd_blocks(const TermTileConfig& cfg, const float* a, int lda, const float* w, int ldw,
                 float* acc, int ldc, int M, int K, int N, TermMatmulStats& st,
                 int64_t* block_cycles) {
  const PeConfig& pe = cfg.pe;
  const int L = pe.lanes;
  const int kp = (K + L - 1) / L * L, steps = kp / L;
  const bool inputs_serial = cfg.serial == TermSerialOperand::Inputs;
  // Scratch kept per thread: an MXU push calls this once per mmul, without allocating.
  thread_local detail::TileOperands ops;
  thread_local std::vector<detail::SerialSteps> rows;
  thread_local std::vector<int> step_max, x0s, group_base;
  thread_local DecodedWeights decoded;
  // Every input entry is rewritten below; the padding (k >= K, columns beyond M or N) keeps the
  // +0 that resize wrote, so with unchanged weights and shape nothing else needs decoding.
  const bool reuse = decoded.matches(w, ldw, M, K, N, L, inputs_serial);
  if (!reuse) ops.resize(inputs_serial ? M : N, kp, inputs_serial ? N : M);
  for (int m = 0; m < M; ++m) {
    if (inputs_serial) {
      ops.set_serial_row(m, a + static_cast<ptrdiff_t>(m) * lda, K);
      continue;
    }
    for (int k = 0; k < K; ++k)
      ops.set_parallel(k, m, detail::make_operand(bf16_from_f32(a[m * lda + k])));
  }
  if (!reuse) {
    for (int k = 0; k < K; ++k) {
      if (inputs_serial) {
        ops.set_parallel_row(k, w + static_cast<ptrdiff_t>(k) * ldw, N);
        continue;
      }
      for (int n = 0; n < N; ++n)
        ops.set_serial(n, k, detail::make_operand(bf16_from_f32(w[k * ldw + n])));
    }
    decoded.remember(w, ldw, M, K, N, L, inputs_serial);
  }
  // The groups of 8 PEs along the dimension that does not share the serial operand, packed for
  // the exact-product steps (the parallel operand is the weights, kept while reused, or the
  // inputs), and every serial row's live lanes.
  const int across_total = inputs_serial ? N : M, tile_across = inputs_serial ? cfg.cols : cfg.rows;
  thread_local std::vector<int> previous_x0s;
  x0s.clear();
  group_base.clear();
  for (int b0 = 0; b0 < across_total; b0 += tile_across) {
    group_base.push_back(static_cast<int>(x0s.size()));
    for (int v0 = 0; v0 < std::min(tile_across, across_total - b0); v0 += detail::kGroupPes)
      x0s.push_back(b0 + v0);
  }
  if (!inputs_serial || !reuse || x0s != previous_x0s) {
    ops.pack(x0s);
    previous_x0s = x0s;
  }
  const int serial_count = inputs_serial ? M : N;
  if (inputs_serial || !reuse) {
    rows.resize(static_cast<size_t>(serial_count));
    for (int s = 0; s < serial_count; ++s) rows[static_cast<size_t>(s)].build(ops, s, steps, L);
  }
  // Serial row by serial row, all its groups step by step (row_steps). The tile's lockstep
  // timing: step j of block b lasts step_max[b * steps + j] (its slowest PE), and PEs wait
  // step_max * PEs - (sum of their own cycles) in all.
  const int blocks_m = (M + cfg.rows - 1) / cfg.rows, blocks_n = (N + cfg.cols - 1) / cfg.cols;
  thread_local std::vector<detail::RowGroup> groups;
  step_max.assign(static_cast<size_t>(blocks_m) * blocks_n * steps, 0);
  detail::GroupTotals totals;
  for (int s = 0; s < serial_count; ++s) {
    // PE x of the row accumulates into out[x * stride].
    float* out = inputs_serial ? acc + static_cast<ptrdiff_t>(s) * ldc : acc + s;
    const int stride = inputs_serial ? 1 : ldc;
    groups.clear();
    for (int bi = 0, b0 = 0; b0 < across_total; ++bi, b0 += tile_across) {
      const int across = std::min(tile_across, across_total - b0);
      const int block =
          inputs_serial ? (s / cfg.rows) * blocks_n + bi : bi * blocks_n + s / cfg.cols;
      for (int v0 = 0; v0 < across; v0 += detail::kGroupPes)
        groups.push_back(
            detail::RowGroup{b0 + v0, group_base[static_cast<size_t>(bi)] + v0 / detail::kGroupPes,
                             std::min(detail::kGroupPes, across - v0),
                             out + static_cast<ptrdiff_t>(b0 + v0) * stride, stride,
                             &step_max[static_cast<size_t>(block) * steps]});
    }
    detail::row_steps(pe, ops, rows[static_cast<size_t>(s)], s, steps, groups.data(),
                      static_cast<int>(groups.size()), totals);
  }
  for (int bm = 0; bm < blocks_m; ++bm) {
    for (int bn = 0; bn < blocks_n; ++bn) {
      const int nr = std::min(cfg.rows, M - bm * cfg.rows),
                nc = std::min(cfg.cols, N - bn * cfg.cols);
      const int* sm = &step_max[static_cast<size_t>(bm * blocks_n + bn) * steps];
      int64_t block = 0;
      for (int j = 0; j < steps; ++j) block += sm[j];
      st.cycles += block;
      st.pe_stall_cycles += block * nr * nc;
      st.tile_steps += steps;
      if (block_cycles != nullptr) *block_cycles++ = block;
      st.pe_steps += static_cast<int64_t>(nr) * nc * steps;
    }
  }
  st.pe_stall_cycles -= totals.pe_cycles;
  st.terms_processed += totals.processed;
  st.terms_skipped_zero += totals.skipped_zero;
  st.terms_skipped_oob += totals.skipped_oob;
  st.lane_idle_cycles += totals.lane_idle;
}

}  // namespace

void term_matmul_accumulate(const TermTileConfig& cfg, const float* a, int lda, const float* w,
                            int ldw, float* acc, int ldc, int M, int K, int N,
                            TermMatmulStats* stats, int64_t* block_cycles) {
  cfg.validate();
  check_shape(lda, ldw, ldc, M, K, N);
  TermMatmulStats st;
  st.macs = static_cast<int64_t>(M) * K * N;
  if (M > 0 && N > 0 && K > 0 && detail::tile_avx2_supported(cfg.pe)) {
    simd_blocks(cfg, a, lda, w, ldw, acc, ldc, M, K, N, st, block_cycles);
  } else if (M > 0 && N > 0 && K > 0) {
    const Decoded d = decode(a, lda, w, ldw, M, K, N, cfg.pe.lanes);
    if (detail::use_int64(cfg.pe))
      fast_blocks<int64_t>(cfg, d, acc, ldc, M, N, st, block_cycles);
    else
      fast_blocks<__int128>(cfg, d, acc, ldc, M, N, st, block_cycles);
  }
  if (stats != nullptr) *stats += st;
}

void term_matmul_accumulate_reference(const TermTileConfig& cfg, const float* a, int lda,
                                      const float* w, int ldw, float* acc, int ldc, int M, int K,
                                      int N, TermMatmulStats* stats) {
  cfg.validate();
  check_shape(lda, ldw, ldc, M, K, N);
  TermMatmulStats st;
  st.macs = static_cast<int64_t>(M) * K * N;
  const int L = cfg.pe.lanes;
  const int steps = K == 0 ? 0 : (K + L - 1) / L;
  int64_t* no_block_cycles = nullptr;
  for (int m0 = 0; m0 < M && steps > 0; m0 += cfg.rows) {
    for (int n0 = 0; n0 < N; n0 += cfg.cols) {
      const int rows = std::min(cfg.rows, M - m0), cols = std::min(cfg.cols, N - n0);
      std::vector<int> pe_cycles(static_cast<size_t>(rows) * cols * steps);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
          const int m = m0 + r, n = n0 + c;
          PeAccumulator state = accumulator_from_f32(acc[m * ldc + n], cfg.pe);
          for (int j = 0; j < steps; ++j) {
            std::vector<Bf16> in(L, Bf16{0}), wt(L, Bf16{0});
            for (int i = 0; i < L && j * L + i < K; ++i) {
              in[i] = bf16_from_f32(a[m * lda + j * L + i]);
              wt[i] = bf16_from_f32(w[(j * L + i) * ldw + n]);
            }
            const bool inputs_serial = cfg.serial == TermSerialOperand::Inputs;
            const StepStats s =
                reference_step(cfg.pe, inputs_serial ? wt : in, inputs_serial ? in : wt, state);
            pe_cycles[static_cast<size_t>(r * cols + c) * steps + j] = s.cycles;
            add_lane_counts(s.lanes.data(), L, s.cycles, st);
          }
          acc[m * ldc + n] = accumulator_to_f32(state, cfg.pe);
        }
      }
      fold_tile_timing(pe_cycles, rows * cols, steps, st, no_block_cycles);
      st.pe_steps += static_cast<int64_t>(rows) * cols * steps;
    }
  }
  if (stats != nullptr) *stats += st;
}

}  // namespace tessera::numerics
