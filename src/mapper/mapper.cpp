#include "mapper/mapper.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"
#include "mapper/communities.h"
#include "mapper/core_problem.h"
#include "mapper/placers.h"
#include "mapper/rl_placer.h"
#include "mapper/system_refine.h"

namespace tessera::mapper {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

AnnealOptions anneal_options(const MapOptions& opt, int n, int total, int p, double t_scale) {
  AnnealOptions a;
  a.seed = opt.seed * 1000003ULL + static_cast<uint64_t>(p);
  a.t_scale = t_scale;
  if (opt.anneal_seconds > 0.0) {
    a.seconds = opt.anneal_seconds * n / std::max(1, total);
  } else {
    a.max_moves = opt.anneal_moves_per_node * n;
  }
  return a;
}

std::vector<int> place_core(const CoreProblem& pb, const MapOptions& opt, int total, int p) {
  const std::string& m = opt.method;
  const uint64_t seed = opt.seed * 7919ULL + static_cast<uint64_t>(p);
  if (m == "random") return place_random(pb, seed);
  if (m == "row-major") return place_row_major(pb);
  if (m == "snake") return place_snake(pb);
  if (m == "hilbert") return place_hilbert(pb);
  if (m == "greedy") return place_greedy(pb);
  if (m == "scotch") return place_scotch(pb, seed);
  // Annealing methods: a wall-clock budget covers the construction of the start as well.
  auto t0 = Clock::now();
  // The refinement's final descent runs after the annealing and within the same budget: the
  // annealing stops kPolishShare of the budget early.
  constexpr double kPolishShare = 0.02;
  auto refine = [&](std::vector<int> start, double t_scale, int window) {
    AnnealOptions a = anneal_options(opt, pb.n(), total, p, t_scale);
    a.window = window;
    a.centre = opt.refine_centre;
    if (window > 0) a.t_end_ratio = opt.refine_t_end_ratio;
    const bool descend = window > 0 && opt.refine_polish > 0;
    if (opt.anneal_seconds > 0.0)
      a.seconds =
          std::max(1e-3, a.seconds * (descend ? 1.0 - kPolishShare : 1.0) - seconds_since(t0));
    std::vector<int> pos = anneal(pb, std::move(start), a);
    return descend ? polish(pb, std::move(pos), opt.refine_polish) : pos;
  };
  if (m == "sa") return refine(place_random(pb, seed), 1.0, 0);
  if (m == "greedy+refine") return refine(place_greedy(pb), opt.refine_t_scale, opt.refine_window);
  if (m == "rl" || m == "rl+refine") {
    if (!opt.policy)
      throw UsageError("--policy", fmt::format("method '{}' needs a trained policy", m));
    std::vector<int> pos = place_rl(pb, *opt.policy);
    if (m == "rl") return pos;
    return refine(std::move(pos), opt.refine_t_scale, opt.refine_window);
  }
  throw UsageError("--method", fmt::format("unknown method '{}'", m));
}

bool is_system_refine(const MapOptions& opt) {
  return opt.method == "sa-system" ||
         (opt.refine_scope == RefineScope::kSystem &&
          (opt.method == "rl+refine" || opt.method == "greedy+refine"));
}

// The start of a whole-system method on processor p's problem.
std::vector<int> system_start(const CoreProblem& pb, const MapOptions& opt, int p) {
  if (opt.method == "sa-system")
    return place_random(pb, opt.seed * 7919ULL + static_cast<uint64_t>(p));
  if (opt.method == "greedy+refine") return place_greedy(pb);
  if (!opt.policy)
    throw UsageError("--policy", fmt::format("method '{}' needs a trained policy", opt.method));
  return place_rl(pb, *opt.policy);
}

// rl+refine / greedy+refine with the whole-system refinement: per processor the start (policy or
// greedy), then refine_system over all processors on cost_total, then per processor the final
// descent. A wall-clock budget covers all three (starts included), like the per-processor path.
void refine_whole_system(const LogicalGraph& g, const SystemSpec& sys, const MapOptions& opt,
                         MapResult& res) {
  constexpr double kPolishShare = 0.02;
  auto t0 = Clock::now();
  const bool sa = opt.method == "sa-system";
  const int cpp = sys.cores_per_processor();
  for (int p = 0; p < sys.processors; ++p) {
    CoreProblem pb = make_core_problem(g, sys, res.proc, p);
    if (pb.n() == 0) continue;
    std::vector<int> pos = system_start(pb, opt, p);
    check_core_placement(pb, pos);
    for (int v = 0; v < pb.n(); ++v) res.core[pb.global[v]] = p * cpp + pos[v];
  }
  SystemRefineOptions so;
  so.anneal = anneal_options(opt, g.num_nodes(), g.num_nodes(), 0, sa ? 1.0 : opt.refine_t_scale);
  so.anneal.window = sa ? 0 : opt.refine_window;
  if (!sa) so.anneal.t_end_ratio = opt.refine_t_end_ratio;
  so.cross_share = opt.refine_cross;
  so.cross_t_ratio = sa ? 1.0 : opt.refine_cross_t;
  so.cross_from = opt.refine_cross_from;
  const bool descend = !sa && opt.refine_polish > 0;
  if (opt.anneal_seconds > 0.0)
    so.anneal.seconds = std::max(
        1e-3, opt.anneal_seconds * (descend ? 1.0 - kPolishShare : 1.0) - seconds_since(t0));
  res.core = refine_system(g, sys, std::move(res.core), so);
  for (int v = 0; v < g.num_nodes(); ++v) res.proc[v] = sys.processor_of(res.core[v]);
  if (!descend) return;
  for (int p = 0; p < sys.processors; ++p) {
    CoreProblem pb = make_core_problem(g, sys, res.proc, p);
    if (pb.n() == 0) continue;
    std::vector<int> pos(pb.n());
    for (int v = 0; v < pb.n(); ++v) pos[v] = res.core[pb.global[v]] % cpp;
    pos = polish(pb, std::move(pos), opt.refine_polish);
    check_core_placement(pb, pos);
    for (int v = 0; v < pb.n(); ++v) res.core[pb.global[v]] = p * cpp + pos[v];
  }
}

}  // namespace

std::vector<std::string> core_methods() {
  return {"random",    "row-major",     "snake",  "hilbert", "greedy",   "sa",
          "sa-system", "greedy+refine", "scotch", "rl",      "rl+refine"};
}

std::vector<int> processor_stage(const LogicalGraph& g, const SystemSpec& sys,
                                 const std::string& name, uint64_t seed) {
  if (g.num_nodes() > sys.total_free_cores())
    throw Error("system",
                fmt::format("the graph has {} nodes but the system has only {} free cores",
                            g.num_nodes(), sys.total_free_cores()));
  if (name == "louvain") return processor_stage_louvain(g, sys, seed);
  if (name == "louvain-plain") return processor_stage_louvain(g, sys, seed, false);
  if (name == "metis") return processor_stage_metis(g, sys, seed);
  if (name == "sequential") return processor_stage_sequential(g, sys);
  throw Error(
      "--processor-stage",
      fmt::format("unknown processor stage '{}' (louvain, louvain-plain, metis, sequential)",
                  name));
}

MapResult map_graph(const LogicalGraph& g, const SystemSpec& sys, const MapOptions& opt) {
  auto known = core_methods();
  if (std::find(known.begin(), known.end(), opt.method) == known.end())
    throw UsageError("--method", fmt::format("unknown method '{}'", opt.method));
  MapResult res;
  auto t0 = Clock::now();
  res.proc = processor_stage(g, sys, opt.processor_stage, opt.seed);
  res.stage_seconds.push_back({"processor", seconds_since(t0)});
  auto t1 = Clock::now();
  res.core.assign(g.num_nodes(), -1);
  if (is_system_refine(opt)) refine_whole_system(g, sys, opt, res);
  for (int p = 0; p < sys.processors && !is_system_refine(opt); ++p) {
    CoreProblem pb = make_core_problem(g, sys, res.proc, p);
    if (pb.n() == 0) continue;
    std::vector<int> pos = place_core(pb, opt, g.num_nodes(), p);
    check_core_placement(pb, pos);
    for (int v = 0; v < pb.n(); ++v)
      res.core[pb.global[v]] = p * sys.cores_per_processor() + pos[v];
  }
  res.stage_seconds.push_back({"core", seconds_since(t1)});
  auto t2 = Clock::now();
  res.routing = route_placement(g, sys, res.core, opt.routing);
  res.metrics = evaluate(g, sys, res.core, res.routing);
  res.stage_seconds.push_back({"routing", seconds_since(t2)});
  return res;
}

}  // namespace tessera::mapper
