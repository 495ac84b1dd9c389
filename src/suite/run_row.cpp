#include "suite/run_row.h"

#include <malloc.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "core/core.h"
#include "graph/executor.h"
#include "suite/row_program.h"
#include "suite/workload_graph.h"

namespace tessera::suite {

namespace {

// The values of every graph input, in graph order, from one SplitMix64(seed) stream.
std::vector<std::vector<float>> random_inputs(const graph::Graph& g, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::vector<float>> in;
  for (int v : g.inputs()) {
    std::vector<float> x(static_cast<size_t>(graph::num_elements(g.value(v).shape)));
    for (float& e : x) e = static_cast<float>(2.0 * rng.unit() - 1.0);
    in.push_back(std::move(x));
  }
  return in;
}

// The inputs' and the constants' values as data segments at their HBM addresses.
void add_inputs(RowProgram& rp, const graph::Graph& g, const std::vector<std::vector<float>>& in) {
  auto add = [&](int value, const std::vector<float>& v) {
    std::vector<uint32_t> words(v.size());
    std::memcpy(words.data(), v.data(), words.size() * 4);
    rp.program.data.push_back(isa::DataSegment{
        isa::Space::Hbm, static_cast<uint64_t>(rp.hbm.at(value)), std::move(words)});
  };
  const std::vector<int> ids = g.inputs();
  for (size_t i = 0; i < ids.size(); ++i) add(ids[i], in[i]);
  for (int c : g.constants()) add(c, *g.value(c).data);
}

// Hands the allocator's free memory back to the host before the simulation's timed run, so that
// the run pays for the host memory it first touches whatever earlier rows happened to free: its
// time does not depend on the order of the rows.
void release_free_host_memory() {
  malloc_trim(0);
}

// The result of the row's last node under `mode`. With `seconds`, the executor runs twice and
// `clock` times the second run: its buffers are then in place, so the time is that of computing
// the values natively in steady state, the yardstick least flattering to the simulator.
std::vector<float> reference(const graph::Graph& g, graph::Numerics mode,
                             const std::vector<std::vector<float>>& in, const HostClock& clock,
                             double* seconds) {
  graph::Executor<float> ex(g, mode);
  const std::vector<int> ids = g.inputs();
  for (size_t i = 0; i < ids.size(); ++i) ex.set(ids[i], in[i]);
  ex.run();
  if (seconds != nullptr) *seconds = clock([&] { ex.run(); });
  return ex.get(g.nodes().back().output);
}

void check_bits(const std::string& row, const std::vector<float>& chip,
                const std::vector<float>& host) {
  for (size_t i = 0; i < host.size(); ++i)
    if (std::bit_cast<uint32_t>(chip[i]) != std::bit_cast<uint32_t>(host[i]))
      throw Error(row, fmt::format("the simulated result differs from the chip-numerics host "
                                   "reference at element {}: {} vs {}",
                                   i, chip[i], host[i]));
}

std::vector<std::pair<std::string, int64_t>> stall_causes(const core::Core& c) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (int i = 1; i < core::kNumStallCauses; ++i) {
    const auto cause = static_cast<core::StallCause>(i);
    if (c.stall_cycles(cause) > 0)
      out.emplace_back(std::string(core::to_string(cause)), c.stall_cycles(cause));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace

RowResult run_row(const Row& row, const core::CoreSpec& spec, uint64_t seed,
                  const HostClock& clock) {
  RowResult r;
  r.name = row.name();
  if ((r.unsupported = unsupported_reason(row))) return r;
  const graph::Graph g = row_graph(row);
  r.work = graph_workload(g);
  r.bound = core::roofline(spec, r.work);
  const std::vector<std::vector<float>> in = random_inputs(g, seed);
  std::unique_ptr<core::Core> core;
  int64_t out_hbm = 0;
  try {
    r.host_setup_seconds = clock([&] {
      RowProgram rp = row_program(g, spec);
      add_inputs(rp, g, in);
      out_hbm = rp.hbm.at(g.nodes().back().output);
      core = std::make_unique<core::Core>(spec, rp.program);
      // The core's memories (vector memory, the program's HBM footprint of tensors and scratch,
      // the MXUs' accumulators) in place before the timed run, as the reference's buffers are
      // when it is timed.
      core->host_state().vmem.commit();
      core->host_state().hbm.commit(0, rp.hbm_words);
      for (int m = 0; m < core->machine().mxu_count(); ++m)
        core->machine().mxu(m).commit_accumulators();
    });
  } catch (const Error& e) {  // the program does not fit this core
    r.unsupported = e.what();
    return r;
  }
  release_free_host_memory();
  r.host_seconds = clock([&] { core->run(); });
  r.cycles = core->cycles();
  const core::EventCounts& ev = core->machine().events();
  r.sim_hbm_bytes = ev.hbm_read_bytes + ev.hbm_write_bytes;
  r.stalls = stall_causes(*core);
  r.cycles_over_bound = r.bound.cycles > 0 ? static_cast<double>(r.cycles) / r.bound.cycles : 0.0;
  r.mxu_utilization = r.cycles > 0 ? r.bound.mxu / static_cast<double>(r.cycles) : 0.0;

  const int out = g.nodes().back().output;
  std::vector<float> chip(static_cast<size_t>(graph::num_elements(g.value(out).shape)));
  core->state().hbm.read_block(out_hbm, reinterpret_cast<uint32_t*>(chip.data()),
                               static_cast<int64_t>(chip.size()));
  core.reset();
  check_bits(r.name, chip, reference(g, graph::Numerics::kChip, in, clock, nullptr));
  r.check = "bit-exact vs the host reference executor in chip numerics";
  reference(g, graph::Numerics::kF32, in, clock, &r.ref_host_seconds);
  return r;
}

}  // namespace tessera::suite
