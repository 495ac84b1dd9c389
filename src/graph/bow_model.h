// The bag-of-words topic classifier (the fortunes-topics workload, runtime/fortune_topics.h):
//   h      = embedding_bag(ids [N] i32, offsets [B+1] i32, table [V, D]; mean)   [B, D]
//   logits = h fc.w + fc.b                                    fc.w [D, C], fc.b [C]   [B, C]
//   loss   = softmax_cross_entropy(logits, labels [B])
// N is the step's id capacity (offsets[B] <= N). Parameters in graph order: fc.w, fc.b, table;
// fc.w and fc.b are the zoo's dense layer (fan-in D: init_params), the table ~ N(0, table_std)
// row by row (bow_table_row), so a host touches only the rows its ids name.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/model.h"

namespace tessera::graph {

struct BowSpec {
  int64_t rows = int64_t{1} << 20;  // V
  int64_t dim = 64;                 // D
  int classes = 2;                  // C
  double table_std = 0.1;
};

// Model::input is the ids; the offsets are Model::graph's input "offsets". Throws Error
// "model 'bow'" for sizes < 1.
Model build_bow(const BowSpec& spec, int batch, int64_t capacity);
int bow_offsets(const Model& m);

// Row `row` of the table: D draws x = f32(table_std z), z Box-Muller on two unit53() draws,
// z = sqrt(-2 ln(1 - u1)) cos(2 pi u2), from SplitMix64(m), m the first next() of
// SplitMix64(seed ^ (0x9e3779b97f4a7c15 * (row + 1))).
std::vector<float> bow_table_row(const BowSpec& spec, uint64_t seed, int64_t row);

}  // namespace tessera::graph
