// A slow, cycle-by-cycle reference model of the MXU's R x C weight-stationary systolic array.
// It exists to check the fast model (core/mxu.h) and the numerics contract (numerics/matmul.h):
// it is written to be obviously right, not fast (O(R * C) work per simulated cycle).
//
// The machine modelled:
//   * PE (k, c), k = 0..R-1 top to bottom (the reduction index), c = 0..C-1 left to right. Each PE
//     has one weight register per weight buffer: two (ping-pong) with double buffering, one
//     without.
//   * Weights: one row per cycle shifts into the buffer being loaded; every row of that buffer
//   moves
//     up by one and the incoming row enters at the bottom edge (row R-1), so after R shifts the
//     first row shifted in sits in the top row k = 0, where the partial sums start
//     (numerics/matmul.h).
//   * Inputs: a row of inputs x[0..R) entering at cycle e is skewed: x[k] reaches PE (k, 0) at
//     cycle e + k and moves one column right per cycle, so it is at PE (k, c) at cycle e + k + c.
//     Each row carries the index of the weight buffer of its tile (the "flip" travels with the
//     data).
//   * Partial sums: the sum for (row, column c) enters the top of column c as +0, or as the
//     accumulator's value (chain continuation), and PE (k, c) computes fma(x[k], W[k][c], psum) at
//     cycle e + k + c, handing it down; PE (R-1, c) writes the accumulator at cycle e + R - 1 + c.
//   * Registers: a value written in cycle t is visible from cycle t + 1, and a weight register may
//     not be shifted in a cycle in which a PE multiplies with it.
// The controller does everything as early as these rules allow, judged from the array's state:
//   * the load of tile T starts when the previous load is complete, every input row of the tile
//   that
//     last used the same buffer (T - 2 with double buffering, T - 1 without) has entered, and no
//     input in the array still reads that buffer;
//   * the rows of tile T enter one per cycle, in order, once tile T's weights are complete and
//   every
//     row of tile T - 1 has entered.
// Self-checks (throw std::logic_error): a PE multiplying with a weight of another tile, a partial
// sum meeting the wrong input, an accumulator read before the previous chain link was written.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::mxutest {

// One weight tile and the input rows pushed through it.
struct SystolicTile {
  std::vector<float> weights;  // R x C, row-major, bf16 values held as fp32
  std::vector<float> inputs;   // M x R, row-major, bf16 values held as fp32
  int acc_row0 = 0;            // input row m reads/writes accumulator row acc_row0 + m
  int chain_index = 0;         // 0: the chain starts at +0; n > 0: continues the n-th link's result
};

struct SystolicRun {
  std::vector<float> acc;           // acc_rows x C: the accumulator after the run
  int64_t first_weight_cycle = -1;  // first cycle a weight row shifted in
  int64_t last_result_cycle = -1;   // last cycle a result left the bottom row
  int64_t input_rows = 0;           // rows fed (the busy cycles of the input port)
  int64_t span() const { return last_result_cycle - first_weight_cycle + 1; }
};

class SystolicArray {
 public:
  SystolicArray(int rows, int cols, bool double_buffer);

  // Runs the tiles in order; `acc_rows` accumulator rows of C values, initially +0.
  SystolicRun run(const std::vector<SystolicTile>& tiles, int acc_rows);

 private:
  struct InputSlot {   // what sits in a PE's input register this cycle
    int32_t row = -1;  // global input row id, -1: empty
    float x = 0.0f;
  };
  struct PsumSlot {
    int32_t row = -1;
    float value = 0.0f;
  };
  struct RowInfo {
    int tile;
    int m;
  };

  void advance_inputs(int64_t t);
  bool buffer_in_use(int buffer) const;
  void compute(int64_t t);
  void shift_weights(const float* incoming_row);

  int m_rows, m_cols, m_buffers;
  const std::vector<SystolicTile>* m_tiles = nullptr;
  std::vector<RowInfo> m_row_info;            // by global row id
  std::vector<int32_t> m_entered;             // global row id entering at cycle t (-1: none)
  std::vector<InputSlot> m_in;                // R x C
  std::vector<PsumSlot> m_psum, m_psum_next;  // R x C
  std::vector<std::vector<float>> m_weights;  // per buffer, R x C
  std::vector<int> m_buffer_tile;             // tile whose load completed in each buffer (-1: none)
  int m_loading_buffer = -1;                  // buffer being shifted into (-1: none)
  std::vector<float> m_acc;
  std::vector<int> m_acc_links;  // chain links written into each accumulator element
  SystolicRun m_run;
};

}  // namespace tessera::mxutest
