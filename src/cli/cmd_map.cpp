// `tessera map`: place a logical graph on the cores of a many-core system (docs/mapper.md).
//   tessera map --graph g.json --system s.json [--method rl+refine] [--routing xy] [--out p.json]
//       [--svg f.svg]
//   tessera map gen --family F --nodes N --seed S --out g.json | --from-model mlp|cnn --out g.json
//   tessera map train [--families ...] [--sizes 64,256 | --suites S,M] [--graphs a.json,...]
//       [--eval-families ... --eval-suites M] --out policy.bin
//   tessera map bench --suite S|M|L --seeds 5 [--json] [--out r.json]
#include <cstdio>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "common/file_io.h"
#include "htmlreport/page.h"
#include "mapper/bench_suite.h"
#include "mapper/generators.h"
#include "mapper/graph_io.h"
#include "mapper/mapper.h"
#include "mapper/noc_sim.h"
#include "mapper/output.h"
#include "mapper/rl_placer.h"
#include "report/format.h"

namespace tessera::cli {
namespace {

namespace mp = tessera::mapper;

struct GraphSource {
  std::string graph, format = "auto", model, family;
  int group = 0, nodes = 64;
  uint64_t seed = 1;
};

void add_graph_options(CLI::App* c, GraphSource& g) {
  c->add_option("--graph", g.graph, "graph file (.json, edge list, or .adj/.csv adjacency matrix)");
  c->add_option("--format", g.format, "graph file format: auto, json, edges, matrix");
  c->add_option("--from-model", g.model, "build the graph of a zoo model: mlp, cnn");
  c->add_option("--group", g.group,
                "neurons per node (mlp, default 16) or tile side (cnn, default 7)");
  c->add_option("--family", g.family,
                "generate a benchmark graph: mlp, conv, tiles, dag, planted, random");
  check_positive_integer(c->add_option("--nodes", g.nodes, "approximate node count for --family"));
  add_seed_flag(*c, g.seed, "graph generators and the methods");
}

mp::LogicalGraph load_graph(const GraphSource& s) {
  int given = !s.graph.empty() + !s.model.empty() + !s.family.empty();
  if (given != 1)
    throw UsageError("tessera map", "give exactly one of --graph, --from-model, --family");
  if (!s.graph.empty())
    return mp::read_graph(s.graph, mp::parse_graph_format(s.format, "--format"));
  if (!s.model.empty())
    return mp::gen_from_model(s.model, s.group > 0 ? s.group : (s.model == "mlp" ? 16 : 7));
  return mp::gen_family(s.family, s.nodes, s.seed);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ','))
    if (!t.empty()) out.push_back(t);
  return out;
}

// The whole-system refinement's flags, shared by `map` and `map bench`.
struct SystemRefineArgs {
  mp::MapOptions defaults;
  std::string scope = "system";
  double cross = defaults.refine_cross, cross_t = defaults.refine_cross_t,
         cross_from = defaults.refine_cross_from;

  void apply(mp::MapOptions& opt) const {
    if (scope != "system" && scope != "processor")
      throw UsageError("--refine-scope", fmt::format("'{}' is not system or processor", scope));
    opt.refine_scope = scope == "system" ? mp::RefineScope::kSystem : mp::RefineScope::kProcessor;
    opt.refine_cross = cross;
    opt.refine_cross_t = cross_t;
    opt.refine_cross_from = cross_from;
  }
};

void add_system_refine_options(CLI::App* c, SystemRefineArgs& r) {
  c->add_option("--refine-scope", r.scope,
                "refinement of rl+refine / greedy+refine: system (moves may cross processors, on "
                "cost_total) or "
                "processor (each processor's cores alone)");
  c->add_option("--refine-cross", r.cross,
                "system scope: share of moves aimed at a neighbour's processor")
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--refine-cross-temperature", r.cross_t,
                "system scope: temperature of moves to another processor / the others' temperature")
      ->check(CLI::Range(0.0, 1e6));
  c->add_option("--refine-cross-from", r.cross_from,
                "system scope: share of the budget before moves to other processors start")
      ->check(CLI::Range(0.0, 1.0));
}

struct MapArgs {
  GraphSource src;
  std::string system, mesh = "8x8", method = "rl+refine", stage = "louvain", routing = "xy", policy,
                      out, svg, html;
  int processors = 1;
  long long moves = 400;
  double seconds = 0.0;
  double refine_t = 1.0;
  int refine_window = 2;
  int refine_polish = 3;
  double refine_t_end = 1e-2;
  std::string refine_centre = "centroid";
  SystemRefineArgs system_refine;
  bool noc = false, timing = false, json = false;
};

mp::SystemSpec load_system(const MapArgs& a) {
  if (!a.system.empty()) return mp::read_system(a.system);
  int w = 0, h = 0;
  char x = 0;
  std::istringstream ss(a.mesh);
  if (!(ss >> w >> x >> h) || x != 'x')
    throw UsageError("--mesh", fmt::format("'{}' is not WIDTHxHEIGHT", a.mesh));
  if (w < 1 || h < 1 || a.processors < 1) throw UsageError("--mesh", "sizes must be >= 1");
  return mp::make_system(a.processors, w, h);
}

void run_map(const MapArgs& a) {
  mp::LogicalGraph g = load_graph(a.src);
  mp::SystemSpec sys = load_system(a);
  mp::MapOptions opt;
  opt.method = a.method;
  opt.processor_stage = a.stage;
  opt.routing = mp::parse_turn_model(a.routing, "--routing");
  opt.seed = a.src.seed;
  opt.anneal_moves_per_node = a.moves;
  opt.anneal_seconds = a.seconds;
  opt.refine_t_scale = a.refine_t;
  opt.refine_window = a.refine_window;
  opt.refine_polish = a.refine_polish;
  opt.refine_t_end_ratio = a.refine_t_end;
  if (a.refine_centre != "median" && a.refine_centre != "centroid")
    throw UsageError("--refine-centre",
                     fmt::format("'{}' is not median or centroid", a.refine_centre));
  opt.refine_centre =
      a.refine_centre == "median" ? mp::WindowCentre::kMedian : mp::WindowCentre::kCentroid;
  a.system_refine.apply(opt);
  std::unique_ptr<mp::Policy> policy;
  if (a.method == "rl" || a.method == "rl+refine") {
    policy = std::make_unique<mp::Policy>(
        mp::Policy::load(a.policy.empty() ? mp::default_policy_path() : a.policy));
    opt.policy = policy.get();
  }
  mp::MapResult res = mp::map_graph(g, sys, opt);
  mp::NocResult noc;
  if (a.noc) noc = mp::simulate_noc(g, sys, res.core, res.routing);
  const auto j =
      report::tagged("map", mp::result_json(g, sys, opt, res, a.noc ? &noc : nullptr, a.timing));
  if (!a.out.empty()) write_file(a.out, j.dump(1) + "\n");
  if (!a.svg.empty()) write_file(a.svg, mp::result_svg(g, sys, res));
  if (!a.html.empty()) {
    OutputFile html(a.html, "HTML report");
    htmlreport::write_report({a.html, "map", htmlreport::Kind::kMap, j}, html);
  }
  if (a.json) {
    std::printf("%s\n", j.dump(1).c_str());
    return;
  }
  const mp::Metrics& m = res.metrics;
  std::printf("%d nodes, %d edges on %d x %dx%d; method %s, routing %s\n", g.num_nodes(),
              g.num_edges(), sys.processors, sys.width, sys.height, a.method.c_str(),
              a.routing.c_str());
  std::printf("cost %.6g (intra %.6g, inter %.6g), reward %.6g, max link load %.6g, cut %.6g\n",
              m.cost_total, m.cost_intra, m.cost_inter, m.reward, m.max_link_load, m.cut);
  std::printf("capacity violations %d, deadlock-free %s\n", m.capacity_violations,
              m.deadlock_free ? "yes" : "NO");
  if (!m.deadlock_free) std::printf("cycle: %s\n", mp::describe_cycle(m.cycle, sys).c_str());
  if (a.noc)
    std::printf("NoC makespan %.6g cycles, %lld packets, max link utilisation %.3f\n", noc.makespan,
                noc.packets, noc.max_link_utilisation);
  for (auto& [k, v] : res.stage_seconds) std::printf("stage %-9s %.3f s\n", k.c_str(), v);
}

void register_gen(CLI::App* map) {
  auto src = std::make_shared<GraphSource>();
  auto out = std::make_shared<std::string>();
  auto* c = map->add_subcommand("gen", "generate a benchmark or zoo-model graph as JSON");
  add_graph_options(c, *src);
  c->add_option("--out", *out, "output JSON file")->required();
  c->callback([src, out] {
    mp::LogicalGraph g = load_graph(*src);
    mp::write_graph(g, *out);
    std::printf("%d nodes, %d edges -> %s\n", g.num_nodes(), g.num_edges(), out->c_str());
  });
}

struct TrainArgs {
  std::string families = "mlp,conv,tiles,dag,planted,random", sizes = "64", suites, graphs, out,
              routing = "xy", curve;
  int count = 2, iterations = 200, hidden = 24, samples = 16, epochs = 8, log_every = 10,
      outputs = 1, inputs = mp::kPolicyInputs;
  double threshold = 8.0, lr = 3e-3, sigma = 1.0, sigma_start = 4.0;
  std::string credit = "placement", reward = "spec", decode = "one-shot";
  bool curriculum = false, layout_skip = false;
  uint64_t seed = 1;
  // Held-out set: these families of these suites, generator seeds [eval_seed, eval_seed + count).
  std::string eval_families, eval_suites = "M";
  int eval_count = 1;
  uint64_t eval_seed = 1;
};

void run_train(const TrainArgs& a) {
  std::vector<mp::CoreProblem> problems;
  auto side_for = [](int n) {
    int s = 1;
    while (s * s < n) ++s;
    return s;
  };
  for (const std::string& path : split(a.graphs)) {
    mp::LogicalGraph g = mp::read_graph(path);
    problems.push_back(mp::make_core_problem(g, side_for(g.num_nodes()), side_for(g.num_nodes())));
  }
  // Generated graphs: per suite its per-processor problems, or (without --suites) per size one
  // graph on the smallest square mesh that holds it.
  const std::vector<std::string> families = split(a.families);
  // Suite problems of `names` (a flag's value), errors naming that flag.
  auto suite_problems = [](const std::string& flag, const std::string& names,
                           const std::vector<std::string>& fams, int count, uint64_t first_seed) {
    std::vector<mp::CoreProblem> out;
    for (const std::string& suite : split(names)) try {
        for (mp::CoreProblem& pb : mp::suite_problems(suite, fams, count, first_seed))
          out.push_back(std::move(pb));
      } catch (const UsageError& e) {
        throw UsageError(flag, e.why());
      }
    return out;
  };
  for (mp::CoreProblem& pb : suite_problems("--suites", a.suites, families, a.count, a.seed * 100))
    problems.push_back(std::move(pb));
  const std::vector<int> sizes = a.suites.empty()
                                     ? positive_integer_list(a.sizes, "--sizes", "node count")
                                     : std::vector<int>{};
  for (const std::string& fam : families)
    for (const int size : sizes)
      for (int k = 0; k < a.count; ++k) {
        mp::LogicalGraph g = mp::gen_family(fam, size, a.seed * 100 + k);
        problems.push_back(
            mp::make_core_problem(g, side_for(g.num_nodes()), side_for(g.num_nodes())));
      }
  if (problems.empty()) throw Error("tessera map train", "no training graphs");
  const mp::HeldOut held_out(suite_problems("--eval-suites", a.eval_suites, split(a.eval_families),
                                            a.eval_count, a.eval_seed));
  mp::TrainOptions opt;
  opt.iterations = a.iterations;
  opt.threshold = a.threshold;
  opt.lr = a.lr;
  opt.seed = a.seed;
  opt.hidden = a.hidden;
  opt.samples = a.samples;
  opt.sigma_steps = a.sigma;
  opt.sigma_start = a.sigma_start;
  opt.epochs = a.epochs;
  if (a.credit != "node" && a.credit != "placement")
    throw UsageError("--credit", fmt::format("unknown credit '{}' (node, placement)", a.credit));
  opt.node_credit = a.credit == "node";
  if (a.reward != "spec" && a.reward != "cost")
    throw UsageError("--reward", fmt::format("unknown reward '{}' (spec, cost)", a.reward));
  opt.reward = a.reward == "cost" ? mp::TrainReward::kCost : mp::TrainReward::kSpec;
  opt.outputs = a.outputs;
  opt.inputs = a.inputs;
  opt.layout_skip = a.layout_skip;
  if (a.decode != "one-shot" && a.decode != "sequential")
    throw UsageError("--decode",
                     fmt::format("unknown decoding '{}' (one-shot, sequential)", a.decode));
  opt.sequential = a.decode == "sequential";
  opt.curriculum = a.curriculum;
  opt.routing = mp::parse_turn_model(a.routing, "--routing");
  // The curve: per pass the training score and, with a held-out set, its cost over greedy's.
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  auto logged = [&](int it) { return it % a.log_every == 0 || it < 0 || it + 1 == a.iterations; };
  mp::Policy pol = mp::train_policy(
      problems, opt,
      [&](int it, double r) {
        curve.push_back({{"iteration", it}, {"train_score", r}});
        if (logged(it)) std::fprintf(stderr, "iteration %d: reward / hilbert reward %.4f\n", it, r);
      },
      held_out.empty() ? nullptr : &held_out,
      [&](int it, double c) {
        curve.back()["held_out_cost_over_greedy"] = c;
        if (logged(it)) std::fprintf(stderr, "iteration %d: held-out cost / greedy %.4f\n", it, c);
      });
  pol.save(a.out);
  if (!a.curve.empty())
    write_file(
        a.curve,
        report::tagged("map-train-curve", nlohmann::ordered_json{{"passes", curve}}).dump(1) +
            "\n");
  std::printf("%zu training graphs, %d iterations -> %s\n", problems.size(), a.iterations,
              a.out.c_str());
}

void register_train(CLI::App* map) {
  auto a = std::make_shared<TrainArgs>();
  auto* c = map->add_subcommand("train", "train the placement policy with PPO");
  c->add_option("--families", a->families, "generated training families (comma separated)");
  c->add_option("--sizes", a->sizes,
                "node counts of generated graphs (comma separated; unused with --suites)");
  c->add_option("--suites", a->suites,
                "train on the per-processor problems of these suites' graphs (S, M, L; comma "
                "separated) instead of --sizes");
  c->add_option("--count", a->count, "graphs per family and size");
  c->add_option("--graphs", a->graphs, "extra training graph files (comma separated)");
  c->add_option("--iterations", a->iterations, "passes over the training graphs");
  c->add_option("--threshold", a->threshold,
                "update once the summed |normalised reward| reaches this");
  c->add_option("--lr", a->lr, "Adam learning rate");
  c->add_option("--hidden", a->hidden, "hidden width");
  c->add_option("--samples", a->samples, "placements sampled per graph visit");
  c->add_option("--sigma", a->sigma,
                "Gaussian width in core-position steps (at the end of training)");
  c->add_option("--sigma-start", a->sigma_start,
                "Gaussian width at the start (geometric schedule)");
  c->add_option("--epochs", a->epochs, "PPO epochs (Adam steps) per update");
  c->add_option("--credit", a->credit,
                "advantage per 'node' (its own interaction cost) or per 'placement'");
  c->add_option("--routing", a->routing, "turn model for the reward");
  c->add_option("--outputs", a->outputs,
                "policy outputs per node: 1 (a position along the Hilbert order) or 2 (x and y on "
                "the mesh)")
      ->check(CLI::Range(1, 2));
  c->add_option("--inputs", a->inputs,
                "policy inputs per node: 9 (spec features, depth, spectral coordinate) or 10 (and "
                "a second spectral coordinate)")
      ->check(CLI::IsMember({mp::kPolicyInputs, mp::kPolicyInputsMesh}));
  c->add_flag("--layout-skip", a->layout_skip,
              "the policy learns an offset from the spectral layout (rank-scaled spectral "
              "coordinates) instead of positions from nothing");
  c->add_option("--decode", a->decode,
                "one-shot (all nodes at once, collisions settled by the conflict rule) or "
                "sequential (one node at a time given the nodes placed, taken cores masked)");
  c->add_option("--reward", a->reward,
                "training reward: spec (directional costs) or cost (sum of w x distance)");
  c->add_flag("--curriculum", a->curriculum,
              "visit the graphs smallest first, the largest joining over the first half of the "
              "passes");
  c->add_option("--eval-families", a->eval_families,
                "held-out families (comma separated): their cost over greedy's is logged per pass");
  c->add_option("--eval-suites", a->eval_suites, "suites of the held-out graphs (default M)");
  c->add_option("--eval-count", a->eval_count, "held-out graphs per family and suite");
  c->add_option("--eval-seed", a->eval_seed, "generator seed of the first held-out graph");
  c->add_option("--curve", a->curve, "write the per-pass scores as JSON here");
  add_seed_flag(*c, a->seed, "training graphs and the policy");
  c->add_option("--log-every", a->log_every, "print the score every N passes")
      ->check(CLI::PositiveNumber);
  c->add_option("--out", a->out, "policy file to write")->required();
  c->callback([a] { run_train(*a); });
}

void register_bench(CLI::App* map) {
  auto a = std::make_shared<mp::BenchOptions>();
  auto methods = std::make_shared<std::string>(), families = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>(), policy = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto refine = std::make_shared<SystemRefineArgs>();
  auto* c = map->add_subcommand("bench", "benchmark all methods on a suite (S, M, L)");
  c->add_option("--suite", a->suite, "S, M or L");
  c->add_option("--seeds", a->seeds, "seeds per family");
  c->add_option("--seconds", a->anneal_seconds,
                "annealing wall-clock budget per graph (default per suite)");
  c->add_option("--methods", *methods, "methods (comma separated; default all)");
  c->add_option("--families", *families, "families (comma separated; default all)");
  c->add_option("--policy", *policy, "policy file (default data/mapper/policy.bin)");
  c->add_option("--out", *out, "write the JSON result here");
  add_json_flag(*c, *json);
  add_system_refine_options(c, *refine);
  c->callback([a, methods, families, out, policy, json, refine] {
    refine->apply(a->map);
    a->methods = split(*methods);
    a->families = split(*families);
    mp::Policy pol = mp::Policy::load(policy->empty() ? mp::default_policy_path() : *policy);
    a->policy = &pol;
    const auto r = report::tagged("map-bench", mp::run_bench(*a, [](const std::string& s) {
                                    std::fprintf(stderr, "%s\n", s.c_str());
                                  }));
    if (!out->empty()) write_file(*out, r.dump(1) + "\n");
    if (*json)
      std::printf("%s\n", r.dump(1).c_str());
    else
      std::printf("%s", mp::bench_table(r).c_str());
  });
}

}  // namespace

void register_map_command(CLI::App& app) {
  auto a = std::make_shared<MapArgs>();
  auto* map = app.add_subcommand("map", "place a logical graph on the cores of a many-core system");
  add_graph_options(map, a->src);
  map->add_option("--system", a->system,
                  "system config JSON (processors, mesh, occupied cores, interconnect)");
  map->add_option("--mesh", a->mesh, "mesh WIDTHxHEIGHT when no --system is given");
  map->add_option("--processors", a->processors, "processors when no --system is given");
  map->add_option("--method", a->method,
                  "random, row-major, snake, hilbert, greedy, sa, sa-system, greedy+refine, "
                  "scotch, rl, rl+refine");
  map->add_option("--processor-stage", a->stage,
                  "louvain (spec: communities + FM refinement), louvain-plain (without the "
                  "refinement), metis, sequential");
  map->add_option("--routing", a->routing,
                  "xy, west-first, north-last, negative-first, odd-even, free");
  map->add_option("--policy", a->policy, "policy file (default data/mapper/policy.bin)");
  map->add_option("--moves-per-node", a->moves, "annealing moves per node (deterministic budget)");
  map->add_option("--seconds", a->seconds, "annealing wall-clock budget instead of moves");
  map->add_option("--refine-temperature", a->refine_t,
                  "refinement start temperature (x mean |delta|)");
  map->add_option("--refine-window", a->refine_window, "refinement move radius (cores)");
  map->add_option("--refine-end-temperature", a->refine_t_end,
                  "refinement final temperature / start temperature")
      ->check(CLI::Range(1e-9, 1.0));
  map->add_option("--refine-polish", a->refine_polish,
                  "radius of the refinement's final descent (cores; 0 = none)")
      ->check(CLI::Range(0, 64));
  map->add_option(
      "--refine-centre", a->refine_centre,
      "centre of the refinement's move window: centroid (of the neighbours) or median (per axis)");
  add_system_refine_options(map, a->system_refine);
  map->add_option("--out", a->out, "write the result JSON here");
  map->add_option("--svg", a->svg, "draw the placement and link loads here");
  add_html_flag(*map, a->html);
  map->add_flag("--noc", a->noc, "run the packet-level NoC simulation");
  map->add_flag("--timing", a->timing, "include per-stage seconds in the JSON");
  add_json_flag(*map, a->json);
  register_gen(map);
  register_train(map);
  register_bench(map);
  map->callback([a, map] {
    if (!map->get_subcommands().empty()) return;
    run_map(*a);
  });
}

}  // namespace tessera::cli
