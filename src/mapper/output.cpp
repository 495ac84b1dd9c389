#include "mapper/output.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "mapper/cdg.h"
#include "mapper/communities.h"

namespace tessera::mapper {

using nlohmann::ordered_json;

std::string default_policy_path() {
  if (const char* env = std::getenv("TESSERA_MAPPER_POLICY")) return env;
  return std::string(TESSERA_MAPPER_DATA_DIR) + "/policy.bin";
}

ordered_json metrics_json(const Metrics& m, const SystemSpec& sys) {
  ordered_json j;
  j["cost_total"] = m.cost_total;
  j["cost_intra"] = m.cost_intra;
  j["cost_inter"] = m.cost_inter;
  j["cost_east"] = m.dir_cost[0];
  j["cost_west"] = m.dir_cost[1];
  j["cost_north"] = m.dir_cost[2];
  j["cost_south"] = m.dir_cost[3];
  j["reward"] = m.reward;
  j["max_link_load"] = m.max_link_load;
  j["mean_link_load"] = m.mean_link_load;
  j["cut"] = m.cut;
  j["capacity_violations"] = m.capacity_violations;
  j["prohibited_turns_taken"] = m.prohibited_turns;
  j["multicast_paths"] = m.multicast_paths;
  j["dl_ratio"] = m.dl_ratio;
  j["deadlock_free"] = m.deadlock_free;
  (void)sys;
  return j;
}

ordered_json result_json(const LogicalGraph& g, const SystemSpec& sys, const MapOptions& opt,
                         const MapResult& res, const NocResult* noc, bool timing) {
  ordered_json j;
  j["method"] = opt.method;
  j["processor_stage"] = opt.processor_stage;
  j["routing"] = turn_model_name(opt.routing);
  j["prohibited_turns_in_model"] = prohibited_turn_count(opt.routing, sys.width, sys.height);
  j["multicast"] = "replicate-at-source";
  j["seed"] = opt.seed;
  ordered_json place = ordered_json::array();
  const std::vector<int> community = louvain(g, 1.0, opt.seed);
  for (int v = 0; v < g.num_nodes(); ++v)
    place.push_back({{"node", g.node(v).name},
                     {"processor", sys.processor_of(res.core[v])},
                     {"x", sys.x_of(res.core[v])},
                     {"y", sys.y_of(res.core[v])},
                     {"community", community[static_cast<size_t>(v)]}});
  j["placement"] = place;
  ordered_json routes = ordered_json::array();
  for (const Route& r : res.routing.routes) {
    std::string hops;
    for (Dir d : r.hops) hops += dir_name(d);
    const Edge& e = g.edges()[r.edge];
    routes.push_back({{"edge", r.edge},
                      {"src", g.node(e.src).name},
                      {"dst", g.node(e.dst).name},
                      {"processor", r.processor},
                      {"hops", hops}});
  }
  j["routes"] = routes;
  ordered_json inter = ordered_json::array();
  for (int e = 0; e < g.num_edges(); ++e) {
    const Edge& ed = g.edges()[e];
    int a = sys.processor_of(res.core[ed.src]), b = sys.processor_of(res.core[ed.dst]);
    if (a != b)
      inter.push_back({{"edge", e},
                       {"src", g.node(ed.src).name},
                       {"dst", g.node(ed.dst).name},
                       {"from", a},
                       {"to", b},
                       {"hops", sys.processor_hops(a, b)}});
  }
  j["inter_processor"] = inter;
  j["metrics"] = metrics_json(res.metrics, sys);
  j["deadlock"] = {
      {"free", res.metrics.deadlock_free},
      {"cycle", res.metrics.cycle.empty() ? "" : describe_cycle(res.metrics.cycle, sys)}};
  if (noc)
    j["noc"] = {{"makespan", noc->makespan},
                {"packets", noc->packets},
                {"max_link_utilisation", noc->max_link_utilisation},
                {"mean_link_utilisation", noc->mean_link_utilisation}};
  if (timing) {
    ordered_json t;
    for (auto& [k, v] : res.stage_seconds) t[k] = v;
    j["stage_seconds"] = t;
  }
  return j;
}

std::string result_svg(const LogicalGraph& g, const SystemSpec& sys, const MapResult& res) {
  const int cell = 28, gap = 40;
  const int pw = sys.width * cell, ph = sys.height * cell;
  const int cols = std::min(sys.processors, 4);
  const int rows = (sys.processors + cols - 1) / cols;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"monospace\" font-size=\"8\">\n",
      cols * (pw + gap) + gap, rows * (ph + gap) + gap);
  std::vector<int> node_at(sys.total_cores(), -1);
  for (int v = 0; v < g.num_nodes(); ++v) node_at[res.core[v]] = v;
  double maxload = std::max(1e-12, res.metrics.max_link_load);
  for (int p = 0; p < sys.processors; ++p) {
    int ox = gap + (p % cols) * (pw + gap), oy = gap + (p / cols) * (ph + gap);
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">processor {}</text>\n", ox, oy - 8,
                     p);
    for (int y = 0; y < sys.height; ++y)
      for (int x = 0; x < sys.width; ++x) {
        int c = sys.core_id(p, x, y);
        const char* fill = sys.is_occupied(c) ? "#999" : node_at[c] >= 0 ? "#9cf" : "#fff";
        s += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#444\"/>\n",
            ox + x * cell + 4, oy + y * cell + 4, cell - 8, cell - 8, fill);
        if (node_at[c] >= 0)
          s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", ox + x * cell + 6,
                           oy + y * cell + 17, node_at[c]);
        for (int d = 0; d < kNumDirs; ++d) {
          double load = res.routing.link_load[static_cast<size_t>(c) * kNumDirs + d];
          if (load <= 0.0) continue;
          int shade = 255 - static_cast<int>(255.0 * load / maxload);
          int cx = ox + x * cell + cell / 2, cy = oy + y * cell + cell / 2;
          int dx[] = {cell / 2, -cell / 2, 0, 0}, dy[] = {0, 0, -cell / 2, cell / 2};
          int off = (d % 2 == 0) ? -3 : 3;
          int ax = cx + (d >= 2 ? off : 0), ay = cy + (d < 2 ? off : 0);
          s += fmt::format(
              "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"rgb(255,{},{})\" "
              "stroke-width=\"2\"><title>{:.3g}</title></line>\n",
              ax + dx[d] / 2, ay + dy[d] / 2, ax + dx[d] * 3 / 2, ay + dy[d] * 3 / 2, shade, shade,
              load);
        }
      }
  }
  s += "</svg>\n";
  return s;
}

}  // namespace tessera::mapper
