// Baseline core placers. Each returns one distinct free core per local node of
// a CoreProblem; all are deterministic for a given seed.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "mapper/core_problem.h"

namespace tessera::mapper {

// Free cores in curve order; node i (in id order) takes the i-th core.
std::vector<int> place_random(const CoreProblem& pb, uint64_t seed);
std::vector<int> place_row_major(const CoreProblem& pb);
std::vector<int> place_snake(const CoreProblem& pb);    // boustrophedon rows
std::vector<int> place_hilbert(const CoreProblem& pb);  // Hilbert curve on the covering 2^k square
// Free cores sorted by Hilbert index (used by several placers).
std::vector<int> hilbert_order(int width, int height, const std::vector<int>& free);

// Greedy: nodes in order of attachment to the placed set (start: the heaviest node, at the centre);
// each goes to the free core minimising the added cost sum w * distance to placed neighbours
// (ties: nearest to the centre, then lowest id).
std::vector<int> place_greedy(const CoreProblem& pb);
// The greedy placer's order: repeatedly the unplaced node most attached (sum of w) to the nodes
// already taken, ties by larger total weight, then lower id. It depends on the graph only.
std::vector<int> attachment_order(const CoreProblem& pb);

// Centre of a refinement move's window: the weighted centroid of the node's neighbours, or their
// weighted median per axis (the minimiser of the node's Manhattan cost).
enum class WindowCentre { kCentroid, kMedian };

struct AnnealOptions {
  double seconds = 1.0;       // wall-clock budget (checked every 1024 moves)
  long long max_moves = -1;   // if >= 0, a fixed move budget instead of time (deterministic)
  double t_start = -1.0;      // initial temperature; < 0 = t_scale * mean |delta| of random moves
  double t_scale = 1.0;       // low values (e.g. 0.02) give a refinement from a good start
  double t_end_ratio = 1e-3;  // final temperature / initial (geometric cooling)
  uint64_t seed = 1;
  int window = 0;  // 0: target core uniform over the free cores; r > 0: see below
  WindowCentre centre = WindowCentre::kCentroid;
};
// Simulated annealing from `start`: a move takes a random node to a target core, swapping with the
// node there if occupied; Metropolis acceptance; geometric cooling over the budget (temperature
// updated every 1024 moves, when the budget is checked). Returns the
// best placement seen. With max_moves >= 0 the result depends only on the inputs and seed.
// Target core: uniform over the free cores (window = 0, the textbook move set), or, for a local
// refinement (window = r), a core drawn uniformly from the (2r+1)^2 square around the `centre` of
// the node's neighbours (moves towards where the node's traffic is; an occupied or off-mesh target
// is skipped).
std::vector<int> anneal(const CoreProblem& pb, std::vector<int> start, const AnnealOptions& opt);
// Share of an annealing budget spent after k moves (of max_moves if >= 0, else of the seconds since
// `begin`); >= 1 when the budget is spent.
double budget_progress(const AnnealOptions& opt, long long k,
                       std::chrono::steady_clock::time_point begin);

// Deterministic descent (the last step of a refinement): passes over the nodes in id order; each
// node takes the best improving move or swap to a free core in the (2 window + 1)^2 square around
// the weighted median of its neighbours (the minimiser of its own Manhattan cost). Stops after a
// pass without gain or after max_passes. Never raises the cost.
std::vector<int> polish(const CoreProblem& pb, std::vector<int> pos, int window,
                        int max_passes = 20);

// Scotch graphMap onto the processor's mesh (sub-architecture of its free cores) with zero
// imbalance; the graph is padded with isolated vertices to one vertex per free core.
std::vector<int> place_scotch(const CoreProblem& pb, uint64_t seed);

// Nearest free core (Manhattan, ties by lowest id) to `target` among cores not in `used`.
int nearest_free(const CoreProblem& pb, int target, const std::vector<char>& used);

}  // namespace tessera::mapper
