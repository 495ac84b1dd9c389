#include "core/mxu.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "core/fault.h"
#include "numerics/bf16.h"
#include "numerics/matmul.h"

namespace tessera::core {

namespace {

bool is_zero(float x) {
  return (std::bit_cast<uint32_t>(x) & 0x7fffffffu) == 0;
}

// 1 + the index of the last element of x[0, n) that is not +-0 (0 if all are).
int nonzero_prefix(const float* x, int n) {
  while (n > 0 && is_zero(x[n - 1])) --n;
  return n;
}

bool all_finite(const float* x, long n) {
  uint32_t exponent_all_ones = 0;  // no early exit: the loop vectorises
  for (long i = 0; i < n; ++i)
    exponent_all_ones |= (~std::bit_cast<uint32_t>(x[i]) & 0x7f800000u) == 0 ? 1u : 0u;
  return exponent_all_ones == 0;
}

bool has_negative_zero(const float* x, long n) {
  uint32_t found = 0;
  for (long i = 0; i < n; ++i) found |= std::bit_cast<uint32_t>(x[i]) == 0x80000000u ? 1u : 0u;
  return found != 0;
}

}  // namespace

MxuStats& MxuStats::operator+=(const MxuStats& o) {
  tiles_loaded += o.tiles_loaded;
  weight_rows += o.weight_rows;
  pushes += o.pushes;
  macs += o.macs;
  busy_cycles += o.busy_cycles;
  if (o.first_weight_cycle >= 0)
    first_weight_cycle = first_weight_cycle < 0
                             ? o.first_weight_cycle
                             : std::min(first_weight_cycle, o.first_weight_cycle);
  last_result_cycle = std::max(last_result_cycle, o.last_result_cycle);
  term += o.term;
  term_tile_imbalance += o.term_tile_imbalance;
  return *this;
}

Mxu::Mxu(const CoreSpec& spec)
    : m_spec(spec),
      m_rows_per_push(spec.sublanes),
      m_staging(static_cast<size_t>(spec.mxu_rows) * spec.mxu_cols, 0.0f),
      m_active(static_cast<size_t>(spec.mxu_rows) * spec.mxu_cols, 0.0f),
      m_acc(int64_t{spec.mxu_acc_blocks} * spec.sublanes * spec.mxu_cols),
      m_in(static_cast<size_t>(spec.sublanes) * spec.mxu_rows, 0.0f),
      m_block_size(static_cast<size_t>(spec.sublanes) * spec.mxu_cols),
      m_fifo_values(m_block_size * spec.mxu_result_fifo, 0.0f),
      m_fifo_ready(spec.mxu_result_fifo, 0) {}

float* Mxu::fifo_push(int64_t ready) {
  const int slot = (m_fifo_head + m_fifo_count) % m_spec.mxu_result_fifo;
  m_fifo_ready[slot] = ready;
  ++m_fifo_count;
  return fifo_block(slot);
}

// ---- readiness -----------------------------------------------------------------------------

int64_t Mxu::mlw_ready(int64_t now) const {
  int64_t t = std::max(now, m_shift_free);
  // A new tile shifts into weight registers that every earlier input must have left: with one
  // buffer, all inputs so far; with two (ping-pong), the inputs pushed before the last mflip.
  if (m_staged_rows == 0) t = std::max(t, m_spec.mxu_double_buffer ? m_staging_free : m_drained);
  return t;
}

int64_t Mxu::mflip_ready(int64_t now) const {
  return std::max(now, m_shift_free);
}

int64_t Mxu::mmul_ready(int64_t now) const {
  return std::max(now, m_input_free);
}

int64_t Mxu::mpop_ready(int64_t now) const {
  return m_fifo_count == 0 ? now : std::max(now, m_fifo_ready[m_fifo_head]);
}

// ---- checks (no state change) --------------------------------------------------------------

void Mxu::check_mlw() const {
  if (m_staged_rows >= m_spec.mxu_rows)
    throw UnitFault(fmt::format(
        "mlw: the staging weight tile already holds all {} rows; mflip it first", m_spec.mxu_rows));
}

void Mxu::check_mflip() const {
  if (m_staged_rows != m_spec.mxu_rows)
    throw UnitFault(fmt::format("mflip: only {} of {} weight rows are staged (one mlw stages {})",
                                m_staged_rows, m_spec.mxu_rows, m_rows_per_push));
}

void Mxu::check_mmul(MmulMode mode, int64_t acc_block) const {
  if (!m_have_active) throw UnitFault("mmul: no active weight tile (mlw the rows, then mflip)");
  if (!m_spec.mxu_double_buffer && m_staged_rows != 0)
    throw UnitFault("mmul: weights are shifting in and double buffering is off");
  if (mode != MmulMode::ToFifo && (acc_block < 0 || acc_block >= m_spec.mxu_acc_blocks))
    throw UnitFault(fmt::format("mmul: accumulator block {} is out of range 0..{}", acc_block,
                                m_spec.mxu_acc_blocks - 1));
  const bool pushes_result = mode == MmulMode::ToFifo || mode == MmulMode::AccumulateOut;
  if (pushes_result && m_fifo_count >= m_spec.mxu_result_fifo)
    throw UnitFault(
        fmt::format("mmul: the result FIFO is full ({} blocks not popped); only mpop makes room",
                    m_fifo_count));
}

void Mxu::check_mpop() const {
  if (m_fifo_count == 0)
    throw UnitFault("mpop: the result FIFO is empty and no result is in flight");
}

// ---- operations ----------------------------------------------------------------------------

void Mxu::mlw(const float* v, int64_t now) {
  check_mlw();
  const int R = m_spec.mxu_rows, C = m_spec.mxu_cols, L = m_spec.lanes;
  const int rows = std::min(m_rows_per_push, R - m_staged_rows);
  for (int s = 0; s < rows; ++s) {
    float* dst = &m_staging[static_cast<size_t>(m_staged_rows + s) * C];
    std::memcpy(dst, v + static_cast<size_t>(s) * L, sizeof(float) * C);
    numerics::round_to_bf16(dst, C);
    const int cols = nonzero_prefix(dst, C);
    if (cols > 0) {
      m_staging_extent.rows = m_staged_rows + s + 1;
      m_staging_extent.cols = std::max(m_staging_extent.cols, cols);
    }
  }
  const int64_t start = mlw_ready(now);
  if (m_stats.first_weight_cycle < 0) m_stats.first_weight_cycle = start;
  m_shift_free = start + rows;
  m_staged_rows += rows;
  m_stats.weight_rows += rows;
}

void Mxu::mflip(int64_t now) {
  check_mflip();
  m_staging_free = m_drained;  // the old active tile becomes the staging buffer
  std::swap(m_staging, m_active);
  m_active_extent = m_staging_extent;
  m_staging_extent = {};
  m_staged_rows = 0;
  m_have_active = true;
  ++m_stats.tiles_loaded;
  // Inputs pushed from now on meet the new weights; with double buffering the switch travels
  // with the input wavefront, so the first new input may enter immediately.
  m_input_free = std::max(m_input_free, mflip_ready(now));
}

void Mxu::mmul(const float* v, MmulMode mode, int64_t acc_block, int64_t now) {
  check_mmul(mode, acc_block);
  const int S = m_rows_per_push, R = m_spec.mxu_rows, C = m_spec.mxu_cols, L = m_spec.lanes;
  for (int s = 0; s < S; ++s)
    std::memcpy(&m_in[static_cast<size_t>(s) * R], v + static_cast<size_t>(s) * L,
                sizeof(float) * R);
  numerics::round_to_bf16(m_in.data(), static_cast<long>(S) * R);

  const size_t block = static_cast<size_t>(S) * C;
  // The values first (a term-serial push's duration depends on them); a ToFifo result is written
  // straight into the slot fifo_push claims below (check_mmul guaranteed room).
  float* out = mode == MmulMode::ToFifo
                   ? fifo_block((m_fifo_head + m_fifo_count) % m_spec.mxu_result_fifo)
                   : m_acc.data() + static_cast<size_t>(acc_block) * block;
  if (mode == MmulMode::ToFifo || mode == MmulMode::Store) std::fill(out, out + block, 0.0f);
  int64_t occupancy = S,
          tail = R + C - 2;  // bf16: a row's last column leaves R + C - 2 after entry
  if (m_spec.mxu_pe == MxuPe::TermSerial) {
    occupancy = term_mmul(out);
    tail = m_spec.term.latency_cycles;
  } else {
    bf16_mmul(out, mode == MmulMode::ToFifo || mode == MmulMode::Store);
  }

  const int64_t start = mmul_ready(now);
  const int64_t last_out = start + occupancy - 1 + tail;
  m_input_free = start + occupancy;
  m_drained = std::max(m_drained, last_out + 1);
  m_stats.last_result_cycle = std::max(m_stats.last_result_cycle, last_out);
  ++m_stats.pushes;
  m_stats.macs += static_cast<int64_t>(S) * R * C;
  m_stats.busy_cycles += occupancy;
  m_last_occupancy = occupancy;

  if (mode == MmulMode::ToFifo) fifo_push(last_out + 1);
  if (mode == MmulMode::AccumulateOut) std::copy(out, out + block, fifo_push(last_out + 1));
}

// The weights outside the extent are +-0, so each output's fma chain continues past the extent
// with fma(a, +-0, s) = s + (+-0), which is s itself unless s is -0 or a is not finite (NaN, inf:
// a x 0 is NaN). So the extent's chains alone give the whole array's bits when every input is
// finite and no result is -0 (a result outside the columns is its starting value; one inside is
// the chain at the extent's end). Otherwise the block is redone over the whole array from its
// starting values (zeros when `fresh`).
void Mxu::bf16_mmul(float* out, bool fresh) {
  const int S = m_rows_per_push, R = m_spec.mxu_rows, C = m_spec.mxu_cols;
  const Extent e = m_active_extent;
  const long block = static_cast<long>(S) * C;
  if ((e.rows < R || e.cols < C) && all_finite(m_in.data(), static_cast<long>(S) * R)) {
    if (!fresh) m_start.assign(out, out + block);
    numerics::mxu_matmul_accumulate(m_in.data(), R, m_active.data(), C, out, C, S, e.rows, e.cols);
    if (!has_negative_zero(out, block)) return;
    if (fresh)
      std::fill(out, out + block, 0.0f);
    else
      std::copy(m_start.begin(), m_start.end(), out);
  }
  numerics::mxu_matmul_accumulate(m_in.data(), R, m_active.data(), C, out, C, S, R, C);
}

int64_t Mxu::term_mmul(float* out) {
  const int S = m_rows_per_push, R = m_spec.mxu_rows, C = m_spec.mxu_cols;
  const TermMxuSpec& ts = m_spec.term;
  const int blocks =
      ((S + ts.tile.rows - 1) / ts.tile.rows) * ((C + ts.tile.cols - 1) / ts.tile.cols);
  m_block_cycles.assign(static_cast<size_t>(blocks), 0);
  m_tile_cycles.assign(static_cast<size_t>(std::min(ts.tiles, blocks)), 0);
  numerics::term_matmul_accumulate(ts.tile, m_in.data(), R, m_active.data(), C, out, C, S, R, C,
                                   &m_stats.term, m_block_cycles.data());
  int64_t busiest = 0, total = 0;
  for (int b = 0; b < blocks; ++b) {
    int64_t& t = m_tile_cycles[static_cast<size_t>(b) % m_tile_cycles.size()];
    t += m_block_cycles[static_cast<size_t>(b)];
    busiest = std::max(busiest, t);
    total += m_block_cycles[static_cast<size_t>(b)];
  }
  m_stats.term_tile_imbalance += busiest * static_cast<int64_t>(m_tile_cycles.size()) - total;
  return std::max<int64_t>(1, busiest + ts.push_cycles);
}

void Mxu::mpop(float* v, int64_t now) {
  check_mpop();
  const int S = m_rows_per_push, C = m_spec.mxu_cols, L = m_spec.lanes;
  const float* values = fifo_block(m_fifo_head);
  for (int s = 0; s < S; ++s) {
    float* row = v + static_cast<size_t>(s) * L;
    std::memcpy(row, values + static_cast<size_t>(s) * C, sizeof(float) * C);
    std::fill(row + C, row + L, 0.0f);
  }
  m_fifo_head = (m_fifo_head + 1) % m_spec.mxu_result_fifo;
  --m_fifo_count;
}

}  // namespace tessera::core
