// PeAttribution: the matrix unit's work in training steps, per layer and per phase (forward,
// input gradient, weight gradient), for `tessera train --pe ...` reports.
//
// Method: every compiled program lists its MXU kernels' bundle ranges with their (layer, phase)
// (compiler/mxu_regions.h); ChipTrainer attaches this object to the core for the main part of each
// training step (not the optimizer update, not evaluation), and the core adds each mmul's work to
// the region of its pc (core/mxu_attribution.h). Regions of different programs (batch sizes) with
// the same (layer, phase) share one key. Work of mmuls outside every region goes to "other" (the
// compiler emits none: a non-zero "other" would be a bug).
// Per-layer accumulator widths (core.mxu.term.layer_acc_width, core/term_layer_width.h) apply
// through the same regions to every attached run, evaluation included (attach with count = false).
//
// The same run's other kernels (every graph node's that is not on the MXU, compiler.h's
// kernel_regions) are attributed by op ("relu", "mul", "reduce_rows", ...): their issue cycles and
// HBM bytes, summed over the nodes of that op. Bundles outside every node's kernel (the step's
// final DMA waits) stay in "other", so layers + ops + other = the attributed run.
//
// Report (pe_json) per key, per phase, and in total: pushes, macs, busy_cycles (the MXU input port:
// the term-serial unit's occupancy, or sublanes per push for bf16 PEs), energy_pj; term-serial PEs
// add terms_processed, terms_skipped_zero, terms_skipped_oob, pe_steps, tile_cycles,
// bf16_busy_equal_pe, speedup_equal_pe, speedup_equal_area, bf16_energy_pj
// (core/term_mxu_report.h's definitions, applied to the region's counters).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/compiler.h"
#include "core/core.h"
#include "core/mxu_attribution.h"

namespace tessera::runtime {

struct PeKey {
  std::string layer;
  compiler::MxuPhase phase = compiler::MxuPhase::kForward;
  compiler::MxuLayerKind kind = compiler::MxuLayerKind::kDense;
  friend bool operator==(const PeKey&, const PeKey&) = default;
};

// Per-key work (index = key index), per-op work (index = op index) and the unattributed rest;
// differences of two snapshots give the work in between.
struct PeWork {
  std::vector<core::MxuWork> keys;
  std::vector<core::MxuWork> ops;
  core::MxuWork other;
};
PeWork operator-(const PeWork& after, const PeWork& before);

class PeAttribution {
 public:
  // Attributes `program`'s runs on `core` (count = false: applies the widths only) until
  // detach(core), which restores the spec's accumulator width.
  void attach(core::Core& core, const compiler::CompiledProgram& program, bool count = true);
  void detach(core::Core& core);

  // Keys in the order their regions were first seen (program order of the first program); the
  // other kernels' ops likewise.
  const std::vector<PeKey>& keys() const { return m_keys; }
  const std::vector<std::string>& ops() const { return m_ops; }
  PeWork work() const;

 private:
  // A region index of m_attr: a key's (op = false) or an op's (op = true) index.
  struct Slot {
    bool op = false;
    int index = 0;
    friend bool operator==(const Slot&, const Slot&) = default;
  };

  std::vector<PeKey> m_keys;
  std::vector<std::string> m_ops;
  std::vector<Slot> m_slots;
  std::map<const compiler::CompiledProgram*, std::vector<int32_t>> m_maps;  // pc -> slot index
  core::MxuAttribution m_attr;
};

// A sum of MXU work by key and of the other kernels' work by op over some training steps (an
// epoch), keys and ops in first-added order.
struct PeTally {
  std::vector<PeKey> keys;
  std::vector<core::MxuWork> work;  // aligned with keys
  std::vector<std::string> ops;
  std::vector<core::MxuWork> op_work;  // aligned with ops
  core::MxuWork other;
  int64_t steps = 0;

  // Adds one step's `diff`, a difference of `attribution`'s work() snapshots.
  void add_step(const PeAttribution& attribution, const PeWork& diff);
  // Checkpoint form: {"steps", "other": [counters], "keys": [{"layer", "phase", "kind", "work":
  // [counters]}], "ops": [{"op", "work": [counters]}]} with MxuWork's 15 integer counters in a
  // fixed order; from_json throws Error(path, ...) when the object is malformed. A key without
  // "kind" (written before kinds existed: dense and conv models only) is conv when its layer's name
  // starts with "conv", else dense; a tally without "ops" (written before ops were attributed) has
  // none.
  nlohmann::ordered_json to_json() const;
  static PeTally from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// The report object of `tally` (fields above): {"pe", "steps", "area_ratio", "area_source",
// "total", "phases": {"forward", "input_grad", "weight_grad"}, "layers": [{"layer", "phase", ...}],
// "kernels": [{"op", "cycles", "hbm_bytes", "cycle_share"}], "other"}: "kernels" is the other
// kernels' work by op, cycle_share its part of the total's cycles; "total" sums layers, kernels
// and other.
nlohmann::ordered_json pe_json(const core::CoreSpec& spec, const PeTally& tally);

// The MXU work split by layer kind (compiler::MxuLayerKind) when `tally` holds attention work, else
// null: {"attention": {...}, "dense": {...}} (and "conv" when there is any), each {"macs",
// "busy_cycles" (the MXU input port's, as in pe_json), "share" (of all keys' busy cycles),
// "utilization" (share x mxu_busy / (cycles x mxu_count): the MXU utilisation of the steps split
// in proportion to the shares, so the kinds add up to it)}. `mxu_busy`, `cycles` and
// `mxu_count`: the steps' MXU busy cycles and cycles, and the core's MXUs.
nlohmann::ordered_json mxu_split_json(const PeTally& tally, int64_t mxu_busy, int64_t cycles,
                                      int mxu_count);

}  // namespace tessera::runtime
