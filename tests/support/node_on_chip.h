// Test support: graph nodes lowered by pass lower (compiler::lower_node), every value at its own
// HBM address, and run on the timed core, vs the host executor in chip numerics: every word of the
// checked value equal.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "compiler/pipeline.h"
#include "core/core.h"
#include "core/spec.h"
#include "graph/executor.h"
#include "support/bit_equal.h"
#include "support/kernel_config.h"

namespace tessera::testing {

// n values uniform in [lo, hi).
inline std::vector<float> node_inputs(size_t n, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * rng.unit());
  return v;
}

// Lowers the nodes [first_node, end) of g (every value at its own HBM address, scratch above
// them), runs them on the timed core of configs/<cfg>.json and compares value `check` with the
// host executor in chip numerics. fp32 inputs and parameters are uniform in [lo, hi), constants
// hold their values; integer
// inputs (ids) are drawn from [0, id_range).
inline void expect_nodes_match_host(const std::string& cfg, const graph::Graph& g,
                                    size_t first_node, int check, uint32_t id_range, double lo,
                                    double hi) {
  const core::CoreSpec spec = kernel_config(cfg);
  graph::Executor<float> host(g, graph::Numerics::kChip);
  compiler::Pipeline p;
  p.spec = &spec;
  p.graph = g;
  int64_t next = 0;
  std::vector<std::vector<float>> data(g.values().size());
  for (const graph::Value& v : g.values()) {
    const int64_t words = std::max<int64_t>(1, graph::num_elements(v.shape));
    p.hbm[v.id] = next;
    next += words;
    if (v.kind == graph::ValueKind::kNode) continue;
    if (v.dtype == graph::DType::kI32) {
      SplitMix64 rng(static_cast<uint64_t>(v.id));
      std::vector<int32_t> ids(static_cast<size_t>(words));
      for (int32_t& id : ids) id = static_cast<int32_t>(rng.next() % id_range);
      std::vector<float>& d = data[static_cast<size_t>(v.id)];
      d.resize(ids.size());
      std::memcpy(d.data(), ids.data(), ids.size() * 4);
      host.set_labels(v.id, ids);
      continue;
    }
    if (v.kind == graph::ValueKind::kConst) {  // the graph's values, which the host holds too
      data[static_cast<size_t>(v.id)] = *v.data;
      continue;
    }
    data[static_cast<size_t>(v.id)] =
        node_inputs(static_cast<size_t>(words), 11 + static_cast<uint64_t>(v.id), lo, hi);
    host.set(v.id, data[static_cast<size_t>(v.id)]);
  }
  p.out.stats.hbm_words = next;
  host.run();
  compiler::Codegen cg(spec);
  for (size_t i = first_node; i < g.nodes().size(); ++i) compiler::lower_node(p, cg, g.nodes()[i]);
  isa::Program prog = cg.finish();
  for (const graph::Value& v : g.values()) {
    std::vector<float> words = data[static_cast<size_t>(v.id)];
    if (v.kind == graph::ValueKind::kNode)  // garbage: the kernel must write every word
      words.assign(static_cast<size_t>(std::max<int64_t>(1, graph::num_elements(v.shape))),
                   1234.5f);
    std::vector<uint32_t> w(words.size());
    std::memcpy(w.data(), words.data(), words.size() * 4);
    prog.data.push_back(
        isa::DataSegment{isa::Space::Hbm, static_cast<uint64_t>(p.hbm.at(v.id)), w});
  }
  core::Core core(spec, prog);
  core.run();
  const std::vector<float>& want = host.get(check);
  std::vector<float> got(want.size());
  core.state().hbm.read_block(p.hbm.at(check), reinterpret_cast<uint32_t*>(got.data()),
                              static_cast<int64_t>(got.size()));
  const graph::Value& v = g.value(check);
  expect_bit_equal(
      got, want,
      cfg + " " + v.name +
          (v.producer >= 0 ? " (" + std::string(graph::op_name(g.node(v.producer).op)) + ")"
                           : std::string()));
}

// The graph's last node lowered alone, its output checked.
inline void expect_node_matches_host(const std::string& cfg, const graph::Graph& g,
                                     uint32_t id_range = 1, double lo = -2.0, double hi = 2.0) {
  expect_nodes_match_host(cfg, g, g.nodes().size() - 1, g.nodes().back().output, id_range, lo, hi);
}

// Every node of the graph lowered in order, value `check` checked.
inline void expect_graph_matches_host(const std::string& cfg, const graph::Graph& g, int check,
                                      double lo = -2.0, double hi = 2.0) {
  expect_nodes_match_host(cfg, g, 0, check, 1, lo, hi);
}

// A graph of inputs of the given shapes and one node over them.
inline graph::Graph one_op(graph::OpKind op, const std::vector<graph::Shape>& shapes,
                           graph::Attrs attrs = {}) {
  graph::Graph g;
  std::vector<int> ins;
  for (size_t i = 0; i < shapes.size(); ++i)
    ins.push_back(g.add_input("in" + std::to_string(i), shapes[i]));
  g.add_node(op, ins, std::move(attrs), "out");
  return g;
}

}  // namespace tessera::testing
