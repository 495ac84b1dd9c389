// One serial row of the vector tile with groups of PEs (numerics/term_pe/tile.h), built from
// operand generators, and the bit-level reference run of one of its groups: shared by the tests of
// row_steps and group_runs_avx2.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "numerics/bf16.h"
#include "numerics/term_pe/reference.h"
#include "numerics/term_pe/term_pe.h"
#include "numerics/term_pe/tile.h"

namespace tessera::numerics::test {

// Groups at x0 = 0, 9, 18, ... (1..4 of them) with 1..8 valid PEs each (the gaps between them are
// unused PEs), one serial row of `steps` x L operands, packed and prepared.
struct RowCase {
  int L = 0, steps = 0, count = 0, x_count = 0;
  std::vector<int> x0s, valids;
  std::vector<Bf16> serial, parallel;  // serial[k], parallel[k * x_count + x]
  detail::TileOperands ops;
  detail::SerialSteps row;
};

// serial_op() and parallel_op() draw one operand each; the draws are: the group count and valid
// PEs from rng, then per k the serial operand followed by the parallel operands of x = 0, 1, ...
template <class Rng, class SerialOp, class ParallelOp>
RowCase make_row_case(Rng& rng, int L, int steps, SerialOp serial_op, ParallelOp parallel_op) {
  RowCase c;
  c.L = L;
  c.steps = steps;
  c.count = 1 + static_cast<int>(rng() % 4);
  for (int g = 0; g < c.count; ++g) {
    c.x0s.push_back(9 * g);
    c.valids.push_back(1 + static_cast<int>(rng() % detail::kGroupPes));
  }
  c.x_count = c.x0s.back() + c.valids.back();
  const int kp = steps * L;
  c.ops.resize(1, kp, c.x_count);
  c.serial.resize(kp);
  c.parallel.resize(static_cast<size_t>(kp) * c.x_count);
  for (int k = 0; k < kp; ++k) {
    c.serial[k] = serial_op();
    c.ops.set_serial(0, k, detail::make_operand(c.serial[k]));
    for (int x = 0; x < c.x_count; ++x) {
      c.parallel[static_cast<size_t>(k) * c.x_count + x] = parallel_op();
      c.ops.set_parallel(k, x,
                         detail::make_operand(c.parallel[static_cast<size_t>(k) * c.x_count + x]));
    }
  }
  c.ops.pack(c.x0s);
  c.row.build(c.ops, 0, steps, L);
  return c;
}

// The RowGroups of the case, PE x accumulating into out[x], step maxima at step_max[g * steps].
inline std::vector<detail::RowGroup> row_groups(const RowCase& c, float* out, int* step_max) {
  std::vector<detail::RowGroup> groups;
  for (int g = 0; g < c.count; ++g)
    groups.push_back(detail::RowGroup{c.x0s[g], g, c.valids[g], out + c.x0s[g], 1,
                                      step_max + static_cast<size_t>(g) * c.steps});
  return groups;
}

// reference_step over every step of group g from the fp32 start values init[x0 + v].
struct GroupReference {
  std::vector<PeAccumulator> final;  // per valid PE
  std::vector<float> out;            // accumulator_to_f32 of final
  std::vector<int> slowest;          // per step: the slowest PE's cycles
  detail::GroupTotals totals;
  bool overflowed = false;  // some accumulator became Inf or NaN
};

inline GroupReference reference_group(const PeConfig& cfg, const RowCase& c, int g,
                                      const float* init) {
  GroupReference e;
  e.slowest.assign(static_cast<size_t>(c.steps), 0);
  const int L = c.L;
  for (int v = 0; v < c.valids[g]; ++v) {
    const int x = c.x0s[g] + v;
    PeAccumulator acc = accumulator_from_f32(init[x], cfg);
    for (int j = 0; j < c.steps; ++j) {
      std::vector<Bf16> a(L), b(c.serial.begin() + j * L, c.serial.begin() + (j + 1) * L);
      for (int i = 0; i < L; ++i) a[i] = c.parallel[static_cast<size_t>(j * L + i) * c.x_count + x];
      const StepStats s = reference_step(cfg, a, b, acc);
      e.overflowed = e.overflowed || acc.kind == PeAccumulator::Kind::Inf ||
                     acc.kind == PeAccumulator::Kind::NaN;
      e.slowest[static_cast<size_t>(j)] = std::max(e.slowest[static_cast<size_t>(j)], s.cycles);
      e.totals.pe_cycles += s.cycles;
      for (int i = 0; i < L; ++i) {
        e.totals.processed += s.lanes[i].processed;
        e.totals.skipped_zero += s.lanes[i].skipped_zero;
        e.totals.skipped_oob += s.lanes[i].skipped_oob;
        e.totals.lane_idle += s.cycles - s.lanes[i].processed;
      }
    }
    e.final.push_back(acc);
    e.out.push_back(accumulator_to_f32(acc, cfg));
  }
  return e;
}

inline void add_totals(detail::GroupTotals& to, const detail::GroupTotals& t) {
  to.processed += t.processed;
  to.skipped_zero += t.skipped_zero;
  to.skipped_oob += t.skipped_oob;
  to.lane_idle += t.lane_idle;
  to.pe_cycles += t.pe_cycles;
}

}  // namespace tessera::numerics::test
