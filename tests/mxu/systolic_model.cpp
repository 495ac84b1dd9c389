#include "systolic_model.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tessera::mxutest {

SystolicArray::SystolicArray(int rows, int cols, bool double_buffer)
    : m_rows(rows),
      m_cols(cols),
      m_buffers(double_buffer ? 2 : 1),
      m_in(static_cast<size_t>(rows) * cols),
      m_psum(static_cast<size_t>(rows) * cols),
      m_psum_next(static_cast<size_t>(rows) * cols),
      m_weights(m_buffers, std::vector<float>(static_cast<size_t>(rows) * cols, 0.0f)),
      m_buffer_tile(m_buffers, -1) {}

// Input registers for cycle t: every row moves one column right; column 0 of row k takes x[k] of
// the input row that entered at cycle t - k.
void SystolicArray::advance_inputs(int64_t t) {
  const int R = m_rows, C = m_cols;
  for (int k = 0; k < R; ++k) {
    InputSlot* row = &m_in[static_cast<size_t>(k) * C];
    for (int c = C - 1; c > 0; --c) row[c] = row[c - 1];
    row[0] = InputSlot{};
    if (t - k < 0) continue;
    const int32_t id = m_entered[static_cast<size_t>(t - k)];
    if (id < 0) continue;
    const RowInfo& info = m_row_info[static_cast<size_t>(id)];
    row[0] = InputSlot{id, (*m_tiles)[info.tile].inputs[static_cast<size_t>(info.m) * R + k]};
  }
}

// True when some PE multiplies with `buffer` this cycle (every row in flight is on the grid).
bool SystolicArray::buffer_in_use(int buffer) const {
  for (const InputSlot& s : m_in)
    if (s.row >= 0 && m_row_info[static_cast<size_t>(s.row)].tile % m_buffers == buffer)
      return true;
  return false;
}

void SystolicArray::compute(int64_t t) {
  const int R = m_rows, C = m_cols;
  struct AccWrite {
    size_t index;
    float value;
    int links;
  };
  std::vector<AccWrite> writes;
  for (int k = 0; k < R; ++k)
    for (int c = 0; c < C; ++c) {
      const size_t pe = static_cast<size_t>(k) * C + c;
      const InputSlot& in = m_in[pe];
      m_psum_next[pe] = PsumSlot{};
      if (in.row < 0) continue;
      const RowInfo& info = m_row_info[static_cast<size_t>(in.row)];
      const SystolicTile& tile = (*m_tiles)[info.tile];
      const int buffer = info.tile % m_buffers;
      if (m_buffer_tile[buffer] != info.tile)
        throw std::logic_error("systolic model: PE (" + std::to_string(k) + "," +
                               std::to_string(c) + ") multiplies tile " +
                               std::to_string(info.tile) + " with a weight it does not hold");
      const size_t acc_index = static_cast<size_t>(tile.acc_row0 + info.m) * C + c;
      float psum_in = 0.0f;
      if (k == 0) {
        if (tile.chain_index > 0) {
          if (m_acc_links[acc_index] != tile.chain_index)
            throw std::logic_error(
                "systolic model: accumulator read before the previous link was written");
          psum_in = m_acc[acc_index];
        }
      } else {
        const PsumSlot& above = m_psum[pe - C];
        if (above.row != in.row)
          throw std::logic_error("systolic model: partial sum meets the wrong input row");
        psum_in = above.value;
      }
      const float out = std::fma(in.x, m_weights[buffer][pe], psum_in);
      m_psum_next[pe] = PsumSlot{in.row, out};
      if (k == R - 1) {
        writes.push_back({acc_index, out, tile.chain_index + 1});
        m_run.last_result_cycle = t;
      }
    }
  for (const AccWrite& w : writes) {
    m_acc[w.index] = w.value;
    m_acc_links[w.index] = w.links;
  }
  std::swap(m_psum, m_psum_next);
}

// Every row of the loading buffer moves up one; the incoming row enters at the bottom.
void SystolicArray::shift_weights(const float* incoming_row) {
  const size_t C = static_cast<size_t>(m_cols);
  std::vector<float>& w = m_weights[static_cast<size_t>(m_loading_buffer)];
  std::memmove(w.data(), w.data() + C, sizeof(float) * C * (m_rows - 1));
  std::memcpy(w.data() + C * (m_rows - 1), incoming_row, sizeof(float) * C);
}

SystolicRun SystolicArray::run(const std::vector<SystolicTile>& tiles, int acc_rows) {
  const int R = m_rows, C = m_cols;
  const int num_tiles = static_cast<int>(tiles.size());
  m_tiles = &tiles;
  m_run = SystolicRun{};
  m_acc.assign(static_cast<size_t>(acc_rows) * C, 0.0f);
  m_acc_links.assign(m_acc.size(), 0);
  m_row_info.clear();
  m_entered.clear();
  for (auto& s : m_in) s = InputSlot{};
  for (auto& s : m_psum) s = PsumSlot{};
  std::vector<int32_t> first_row(num_tiles + 1, 0);
  for (int T = 0; T < num_tiles; ++T) {
    const int M = static_cast<int>(tiles[T].inputs.size() / R);
    if (M < 1 || static_cast<int>(tiles[T].weights.size()) != R * C ||
        tiles[T].acc_row0 + M > acc_rows)
      throw std::invalid_argument("systolic model: malformed tile " + std::to_string(T));
    for (int m = 0; m < M; ++m) m_row_info.push_back({T, m});
    first_row[T + 1] = first_row[T] + M;
  }

  int t_in = 0, r_in = 0;    // tile whose rows are entering, next row
  int t_ld = 0, ld_row = 0;  // tile being loaded, next weight row
  const int64_t limit =
      64 + static_cast<int64_t>(num_tiles + 1) * (3 * R + C) + 4ll * first_row[num_tiles];
  for (int64_t t = 0;; ++t) {
    if (t > limit) throw std::logic_error("systolic model: no progress");
    int32_t entering = -1;
    if (t_in < num_tiles && m_buffer_tile[t_in % m_buffers] == t_in) {
      entering = first_row[t_in] + r_in;
      if (++r_in == first_row[t_in + 1] - first_row[t_in]) ++t_in, r_in = 0;
    }
    m_entered.push_back(entering);
    m_run.input_rows += entering >= 0;
    advance_inputs(t);

    const float* incoming = nullptr;
    if (t_ld < num_tiles) {
      const int buffer = t_ld % m_buffers;
      const int previous_user = t_ld - m_buffers;
      if (ld_row == 0 && m_loading_buffer < 0 && (previous_user < 0 || t_in > previous_user) &&
          !buffer_in_use(buffer)) {
        m_loading_buffer = buffer;
        m_buffer_tile[buffer] = -1;
      }
      if (m_loading_buffer == buffer) {
        incoming = &tiles[t_ld].weights[static_cast<size_t>(ld_row) * C];
        if (m_run.first_weight_cycle < 0) m_run.first_weight_cycle = t;
        ++ld_row;
      }
    }

    compute(t);

    if (incoming) {
      shift_weights(incoming);
      if (ld_row == R) {
        m_buffer_tile[m_loading_buffer] = t_ld;
        m_loading_buffer = -1;
        ++t_ld;
        ld_row = 0;
      }
    }
    bool busy = false;
    for (const InputSlot& s : m_in) busy = busy || s.row >= 0;
    if (t_in == num_tiles && t_ld == num_tiles && !busy) break;
  }
  m_run.acc = m_acc;
  return m_run;
}

}  // namespace tessera::mxutest
