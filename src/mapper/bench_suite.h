// The mapping benchmark suites: `tessera map bench --suite S|M|L`.
//
//   S: ~64 nodes on one 8x8 mesh;  M: ~1k nodes on 4 processors of 16x16;
//   L: ~16k nodes on 16 processors of 32x32 (all-to-all interconnect, no occupied cores).
// For every family (generators.h), seed and method the graph is mapped and routed (XY) and the
// cost, max link load, reward, deadlock verdict, capacity violations and wall time are recorded.
// Annealing-based methods (sa, greedy+refine, rl+refine) all get the same wall-clock budget for
// their core stage, so ratio_to_sa compares methods with SA at equal time; rl+refine's budget
// includes its policy inference. Scotch uses METIS for the processor stage, the other methods
// Louvain. Summary per method: geometric means over graphs of cost / cost(sa) and cost /
// cost(scotch).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mapper/core_problem.h"
#include "mapper/mapper.h"
#include "mapper/policy.h"

namespace tessera::mapper {

struct BenchOptions {
  std::string suite = "S";
  int seeds = 5;
  double anneal_seconds = -1.0;       // < 0: the suite default (S 0.2, M 2, L 20)
  std::vector<std::string> methods;   // empty: all
  std::vector<std::string> families;  // empty: all
  const Policy* policy = nullptr;
  // Settings of every run (the refinement's); the bench sets method, seed, processor stage, budget
  // and policy.
  MapOptions map;
};

nlohmann::ordered_json run_bench(const BenchOptions& opt,
                                 const std::function<void(const std::string&)>& log = {});
// The core-stage problems of a suite's graphs (training and held-out sets of the policy): for each
// family and seed in [first_seed, first_seed + count), the suite's graph, its processor stage
// (Louvain, as the benchmark runs it) and one problem per processor with nodes on it.
std::vector<CoreProblem> suite_problems(const std::string& suite,
                                        const std::vector<std::string>& families, int count,
                                        uint64_t first_seed);
// A text table (markdown) of a run_bench result's summary.
std::string bench_table(const nlohmann::ordered_json& result);

}  // namespace tessera::mapper
