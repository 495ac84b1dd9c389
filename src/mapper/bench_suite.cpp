#include "mapper/bench_suite.h"

#include <chrono>
#include <cmath>
#include <map>

#include "common/error.h"
#include "mapper/generators.h"
#include "mapper/mapper.h"

namespace tessera::mapper {
namespace {

struct Suite {
  int nodes, processors, width, height;
  double seconds;
};

Suite suite_of(const std::string& name) {
  if (name == "S") return {64, 1, 8, 8, 0.2};
  if (name == "M") return {960, 4, 16, 16, 2.0};
  if (name == "L") return {15360, 16, 32, 32, 20.0};
  throw UsageError("--suite", fmt::format("unknown suite '{}' (S, M, L)", name));
}

}  // namespace

std::vector<CoreProblem> suite_problems(const std::string& suite,
                                        const std::vector<std::string>& families, int count,
                                        uint64_t first_seed) {
  const Suite s = suite_of(suite);
  const SystemSpec sys = make_system(s.processors, s.width, s.height);
  std::vector<CoreProblem> out;
  for (const std::string& fam : families)
    for (int k = 0; k < count; ++k) {
      const uint64_t seed = first_seed + static_cast<uint64_t>(k);
      const LogicalGraph g = gen_family(fam, s.nodes, seed);
      const std::vector<int> proc = processor_stage(g, sys, "louvain", seed);
      for (int p = 0; p < sys.processors; ++p) {
        CoreProblem pb = make_core_problem(g, sys, proc, p);
        if (pb.n() > 0) out.push_back(std::move(pb));
      }
    }
  return out;
}

nlohmann::ordered_json run_bench(const BenchOptions& opt,
                                 const std::function<void(const std::string&)>& log) {
  Suite s = suite_of(opt.suite);
  const double budget = opt.anneal_seconds > 0.0 ? opt.anneal_seconds : s.seconds;
  SystemSpec sys = make_system(s.processors, s.width, s.height);
  std::vector<std::string> methods = opt.methods.empty() ? core_methods() : opt.methods;
  std::vector<std::string> families = opt.families.empty() ? family_names() : opt.families;
  nlohmann::ordered_json out;
  out["suite"] = opt.suite;
  out["system"] = fmt::format("{} x {}x{}", s.processors, s.width, s.height);
  out["seeds"] = opt.seeds;
  out["anneal_seconds"] = budget;
  out["routing"] = "xy";
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  // cost[method][graph index]
  std::map<std::string, std::vector<double>> cost;
  std::map<std::string, double> seconds;
  for (const std::string& fam : families)
    for (int seed = 1; seed <= opt.seeds; ++seed) {
      LogicalGraph g = gen_family(fam, s.nodes, static_cast<uint64_t>(seed));
      for (const std::string& m : methods) {
        MapOptions mo = opt.map;
        mo.method = m;
        mo.seed = static_cast<uint64_t>(seed);
        mo.processor_stage = m == "scotch" ? "metis" : "louvain";
        mo.anneal_seconds = budget;
        mo.policy = opt.policy;
        auto t0 = std::chrono::steady_clock::now();
        MapResult r = map_graph(g, sys, mo);
        double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cost[m].push_back(r.metrics.cost_total);
        seconds[m] += sec;
        rows.push_back({{"family", fam},
                        {"seed", seed},
                        {"nodes", g.num_nodes()},
                        {"edges", g.num_edges()},
                        {"method", m},
                        {"cost", r.metrics.cost_total},
                        {"max_link_load", r.metrics.max_link_load},
                        {"reward", r.metrics.reward},
                        {"cut", r.metrics.cut},
                        {"deadlock_free", r.metrics.deadlock_free},
                        {"capacity_violations", r.metrics.capacity_violations},
                        {"seconds", sec}});
        for (auto& [stage, t] : r.stage_seconds) rows.back()["stage_seconds"][stage] = t;
        if (log)
          log(fmt::format("{} seed {} {:10s} cost {:.6g} ({:.2f} s)", fam, seed, m,
                          r.metrics.cost_total, sec));
      }
    }
  out["results"] = rows;
  nlohmann::ordered_json summary;
  const size_t graphs = families.size() * static_cast<size_t>(opt.seeds);
  for (const std::string& m : methods) {
    nlohmann::ordered_json e;
    for (const char* ref : {"sa", "scotch"}) {
      if (!cost.count(ref)) continue;
      double lg = 0.0;
      for (size_t i = 0; i < graphs; ++i) lg += std::log(cost[m][i] / cost[ref][i]);
      e[std::string("ratio_to_") + ref] = std::exp(lg / graphs);
    }
    e["mean_seconds"] = seconds[m] / graphs;
    summary[m] = e;
  }
  out["summary"] = summary;
  return out;
}

std::string bench_table(const nlohmann::ordered_json& result) {
  std::string t =
      "| method | cost / SA (geo-mean) | cost / Scotch (geo-mean) | mean seconds per graph |\n";
  t += "| --- | --- | --- | --- |\n";
  for (auto it = result["summary"].begin(); it != result["summary"].end(); ++it) {
    auto num = [&](const char* k) {
      return it.value().contains(k) ? fmt::format("{:.3f}", it.value()[k].get<double>())
                                    : std::string("-");
    };
    t += fmt::format("| {} | {} | {} | {} |\n", it.key(), num("ratio_to_sa"),
                     num("ratio_to_scotch"), num("mean_seconds"));
  }
  return t;
}

}  // namespace tessera::mapper
