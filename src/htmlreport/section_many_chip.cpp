// Many chips: a data-parallel training report (epochs with "processors") or an all-reduce
// benchmark. Charts:
//   topology: {"type": "topology", "title", "layout": "ring" | "grid", "columns", "nodes": N,
//              "links": [{"from", "to", "value"}], "unit"}: chips on a circle (ring, line) or a
//              grid (torus), each directed link coloured by its utilisation;
//   bars of compute / exchange / overlap seconds (last epoch) and of each synchronisation group's
//   supersteps (barrier and exchange seconds); a table of the run-level figures.
// Per training step of a data-parallel report's epochs ("per_step", steps numbered across
// epochs):
//   a timeline (timeline.h) with three tracks per run on the simulated clock (seconds from the
//   first step's start, steps back to back): "steps" (each step, named with its supersteps),
//   "compute" (the busiest processor's compute, from the step's start) and "exchange" (the
//   barriers and exchange phases on the critical path, ending with the step), so that an overlap
//   shows as compute and exchange at the same time;
//   stacked bars per step splitting its time into compute only, overlap, exchange only and
//   neither (max(0, seconds - compute - exchange)), which add up to the step's seconds.
// Per superstep of an all-reduce report ("superstep_spans", cli/bench/allreduce.cpp): a timeline
// with three tracks per run: "compute", "barrier" and "exchange" (add_superstep_spans).
#include <algorithm>

#include <fmt/format.h>

#include "htmlreport/sections.h"
#include "htmlreport/timeline.h"

namespace tessera::htmlreport {
namespace {

bool is_data_parallel(const Input& i) {
  return i.kind == Kind::kTrain && !field(last_of(i.data, "epochs"), "processors").is_null();
}

Json topology_chart(const Input& i) {
  const Json& links_in = list_at(field(field(i.data, "system"), "fabric"), "links");
  if (links_in.empty()) return nullptr;
  const Json& c = field(i.data, "resolved_config");
  constexpr int64_t kMaxDrawn = int64_t{1} << 20;  // chips the page may draw
  const int64_t chips = count_at(c, "system.chips", kMaxDrawn);
  const int64_t dx = count_at(c, "system.torus.dims_x", kMaxDrawn);
  const int64_t dy = count_at(c, "system.torus.dims_y", kMaxDrawn);
  const bool grid = text_at(c, "system.topology", "").starts_with("torus") && dx * dy == chips;
  Json links = Json::array();
  for (const Json& l : links_in) {
    const double from = number_at(l, "from"), to = number_at(l, "to");
    if (from >= 0 && to >= 0 && from < chips && to < chips)
      links.push_back({{"from", from}, {"to", to}, {"value", number_at(l, "utilisation")}});
  }
  return Json{{"type", "topology"},
              {"title", fmt::format("{}: {} chips, {} ({} per link direction)", i.label, chips,
                                    text_at(c, "system.topology"), "utilisation")},
              {"layout", grid ? "grid" : "ring"},
              {"columns", grid ? dx : chips},
              {"nodes", chips},
              {"links", std::move(links)},
              {"unit", "utilisation"}};
}

// The n-th number of the array at `key` of `j`, or 0.
double nth(const Json& j, const char* key, size_t n) {
  const Json& v = list_at(j, key);
  return n < v.size() ? number_of(v[n]) : 0.0;
}

// The timeline and stacked bars of a data-parallel run's per-step figures (see the top).
class StepFigures {
 public:
  void add_run(const Input& i) {
    const std::string steps = i.label + " steps", compute = i.label + " compute",
                      exchange = i.label + " exchange";
    Bars bars(i.label + ": compute, exchange and overlap per step", "s", BarLayout::kStacked);
    double t = 0;
    int64_t number = 0;
    for (const Json& e : list_at(i.data, "epochs")) {
      const Json& p = field(e, "per_step");
      for (size_t k = 0; k < list_at(p, "seconds").size(); ++k) {
        const double wall = nth(p, "seconds", k), c = std::min(wall, nth(p, "compute_seconds", k)),
                     x = std::min(wall, nth(p, "exchange_seconds", k));
        const double both = std::max(0.0, c + x - wall);
        const std::string step = fmt::format("step {}", ++number);
        m_timeline.add(steps, t, wall,
                       fmt::format("{}: {} supersteps", step, nth(p, "supersteps", k)));
        m_timeline.add(compute, t, c, "compute");
        m_timeline.add(
            exchange, t + wall - x, x,
            fmt::format("exchange and barriers (barriers {:.4g} s)", nth(p, "barrier_seconds", k)));
        bars.add("compute only", step, c - both);
        bars.add("overlap", step, both);
        bars.add("exchange only", step, x - both);
        bars.add("neither", step, std::max(0.0, wall - c - x));
        t += wall;
      }
    }
    if (!bars.empty()) m_bars.push_back(bars.to_json());
  }

  // The timeline and the bars (nothing when no run has per-step figures).
  void append_to(Json& charts) const {
    if (m_timeline.empty()) return;
    charts.push_back(m_timeline.to_json(
        "Training steps and their supersteps on the simulated clock (scroll to zoom, drag to pan)",
        "s"));
    for (const Json& b : m_bars) charts.push_back(b);
  }

 private:
  TimelineBuilder m_timeline;
  std::vector<Json> m_bars;
};

// The supersteps of an all-reduce report's "superstep_spans" on `timeline`: per superstep k the
// compute before it (from the previous superstep's release, or 0, to the last arrival), the
// barriers ([arrived, posted] when the exchange waits for one, [delivered, released]) and the
// exchange ([posted, delivered]).
void add_superstep_spans(const Input& i, TimelineBuilder& timeline) {
  const Json& s = field(i.data, "superstep_spans");
  double previous = 0;
  for (size_t k = 0; k < list_at(s, "arrived").size(); ++k) {
    const double arrived = nth(s, "arrived", k), posted = nth(s, "posted", k),
                 delivered = nth(s, "delivered", k), released = nth(s, "released", k);
    const std::string name = fmt::format("superstep {}", k + 1);
    timeline.add(i.label + " compute", previous, std::max(0.0, arrived - previous), name);
    if (posted > arrived)
      timeline.add(i.label + " barrier", arrived, posted - arrived, name + ": barrier");
    timeline.add(i.label + " exchange", posted, std::max(0.0, delivered - posted), name);
    timeline.add(i.label + " barrier", delivered, std::max(0.0, released - delivered),
                 name + ": barrier");
    previous = released;
  }
}

}  // namespace

Json many_chip_section(const std::vector<Input>& in) {
  Json charts = Json::array(), rows = Json::array();
  Bars split("Compute, exchange and overlap (last epoch)", "s");
  Bars supersteps("Supersteps per synchronisation group", "s");
  StepFigures per_step;
  TimelineBuilder supersteps_of_allreduce;
  for (const Input& i : in) {
    if (is_data_parallel(i)) {
      per_step.add_run(i);
      const Json& e = last_of(i.data, "epochs");
      for (const char* k : {"compute", "exchange", "overlap"})
        split.add(i.label, k, number_at(e, fmt::format("{}_seconds", k).c_str()));
      rows.push_back({i.label, field(e, "processors"), text_at(i.data, "allreduce"),
                      field(e, "supersteps"), number_at(e, "exchange_share"),
                      number_at(e, "max_link_utilization"), number_at(e, "scaling_efficiency")});
      int g = 0;
      for (const Json& s : list_at(field(i.data, "system"), "sync_groups")) {
        const std::string name =
            fmt::format("{} group {} ({} supersteps)", i.label, ++g, count_at(s, "supersteps"));
        supersteps.add("barrier", name, number_at(s, "barrier_seconds"));
        supersteps.add("exchange", name, number_at(s, "exchange_seconds"));
      }
      if (Json t = topology_chart(i); !t.is_null()) charts.push_back(std::move(t));
    } else if (i.kind == Kind::kAllreduce) {
      const Json& d = i.data;
      add_superstep_spans(i, supersteps_of_allreduce);
      split.add(i.label, "exchange", number_at(d, "exchange_seconds"));
      split.add(i.label, "barrier", number_at(d, "barrier_seconds"));
      split.add(i.label, "bandwidth bound", number_at(d, "bound_seconds"));
      split.add(i.label, "simulated", number_at(d, "sim_seconds"));
      rows.push_back({i.label, field(d, "processors"), text_at(d, "algorithm"),
                      field(d, "supersteps"), nullptr, nullptr, number_at(d, "efficiency")});
    }
  }
  if (rows.empty()) return nullptr;
  charts.push_back(split.to_json());
  if (!supersteps.empty()) charts.push_back(supersteps.to_json());
  per_step.append_to(charts);
  if (!supersteps_of_allreduce.empty())
    charts.push_back(supersteps_of_allreduce.to_json(
        "All-reduce supersteps on the simulated clock (scroll to zoom, drag to pan)", "s"));
  charts.push_back(make_table("Run figures",
                              {"run", "processors", "all-reduce", "supersteps", "exchange share",
                               "busiest link", "efficiency"},
                              std::move(rows)));
  return make_section("many-chip", "Many chips", std::move(charts));
}

}  // namespace tessera::htmlreport
