#include "runtime/pe_attribution.h"

#include <algorithm>

#include "common/error.h"
#include "core/roofline.h"
#include "core/term_mxu_report.h"

namespace tessera::runtime {

namespace {

// The index of `x` in `v`, appending it first when absent.
template <class T>
int index_of(std::vector<T>& v, const T& x) {
  const auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) return static_cast<int>(it - v.begin());
  v.push_back(x);
  return static_cast<int>(v.size() - 1);
}

}  // namespace

PeWork operator-(const PeWork& after, const PeWork& before) {
  PeWork d = after;
  for (size_t i = 0; i < before.keys.size() && i < d.keys.size(); ++i)
    d.keys[i] = d.keys[i] - before.keys[i];
  for (size_t i = 0; i < before.ops.size() && i < d.ops.size(); ++i)
    d.ops[i] = d.ops[i] - before.ops[i];
  d.other = d.other - before.other;
  return d;
}

void PeAttribution::attach(core::Core& core, const compiler::CompiledProgram& program, bool count) {
  auto it = m_maps.find(&program);
  if (it == m_maps.end()) {
    std::vector<int32_t> map(program.program.code.size(), -1);
    const auto mark = [&](int64_t first, int64_t end, int32_t slot) {
      for (int64_t pc = first; pc < end && pc < static_cast<int64_t>(map.size()); ++pc)
        map[static_cast<size_t>(pc)] = slot;
    };
    for (const compiler::MxuRegion& r : program.mxu_regions)
      mark(r.first_pc, r.end_pc,
           index_of(m_slots,
                    Slot{false, index_of(m_keys, PeKey{r.role.layer, r.role.phase, r.role.kind})}));
    for (const compiler::CompiledProgram::KernelRegion& r : program.kernel_regions)
      if (r.first_pc < static_cast<int64_t>(map.size()) && map[static_cast<size_t>(r.first_pc)] < 0)
        mark(r.first_pc, r.end_pc,
             index_of(m_slots, Slot{true, index_of(m_ops, r.op)}));  // not an MXU node's
    it = m_maps.emplace(&program, std::move(map)).first;
  }
  const core::TermMxuSpec& ts = core.spec().term;
  std::vector<int32_t> widths;
  if (core.spec().mxu_pe == core::MxuPe::TermSerial && !ts.layer_acc_width.empty())
    for (const Slot& slot : m_slots)  // other kernels issue no mmul: any width
      widths.push_back(
          slot.op ? 0
                  : core::layer_acc_width(ts.layer_acc_width,
                                          m_keys[static_cast<size_t>(slot.index)].layer, 0));
  m_attr.set_region_widths(std::move(widths), ts.tile.pe.acc_fraction_bits);
  m_attr.begin(&it->second, core.machine().mxu().stats(), count);
  core.set_mxu_attribution(&m_attr);
}

void PeAttribution::detach(core::Core& core) {
  core.set_mxu_attribution(nullptr);
  core.machine().mxu().set_term_acc_width(core.spec().term.tile.pe.acc_fraction_bits);
}

PeWork PeAttribution::work() const {
  PeWork w;
  w.keys.resize(m_keys.size());
  w.ops.resize(m_ops.size());
  const std::vector<core::MxuWork>& per_slot = m_attr.work();
  for (size_t i = 0; i < per_slot.size() && i < m_slots.size(); ++i)
    (m_slots[i].op ? w.ops : w.keys)[static_cast<size_t>(m_slots[i].index)] = per_slot[i];
  w.other = m_attr.other();
  return w;
}

namespace {

nlohmann::ordered_json work_json(const core::CoreSpec& spec, const core::MxuWork& w) {
  core::MxuStats mx;
  mx.pushes = w.pushes;
  mx.macs = w.macs;
  mx.busy_cycles = w.busy_cycles;
  mx.term = w.term;
  mx.term_tile_imbalance = w.tile_imbalance;
  const core::TermMxuSummary s = core::summarize_term_mxu(spec, mx);
  nlohmann::ordered_json j;
  j["pushes"] = w.pushes;
  j["macs"] = w.macs;
  j["busy_cycles"] = w.busy_cycles;
  j["cycles"] = w.cycles;
  j["hbm_bytes"] = w.hbm_bytes;
  const core::Roofline b = core::roofline(spec, {.macs = w.macs, .hbm_bytes = w.hbm_bytes});
  j["bound_cycles"] = b.cycles;
  j["bound_by"] = core::to_string(b.by);
  j["bound_fraction"] = w.cycles > 0 ? b.cycles / static_cast<double>(w.cycles) : 0.0;
  if (spec.mxu_pe != core::MxuPe::TermSerial) {
    j["energy_pj"] = s.bf16_energy_pj;
    return j;
  }
  j["terms_processed"] = w.term.terms_processed;
  j["terms_skipped_zero"] = w.term.terms_skipped_zero;
  j["terms_skipped_oob"] = w.term.terms_skipped_oob;
  j["pe_steps"] = w.term.pe_steps;
  j["tile_cycles"] = w.term.cycles;
  j["bf16_busy_equal_pe"] = s.bf16_busy_equal_pe;
  j["speedup_equal_pe"] = s.speedup_equal_pe;
  j["speedup_equal_area"] = s.speedup_equal_area;
  j["energy_pj"] = s.energy_pj;
  j["bf16_energy_pj"] = s.bf16_energy_pj;
  return j;
}

}  // namespace

void PeTally::add_step(const PeAttribution& attribution, const PeWork& diff) {
  for (size_t i = 0; i < attribution.keys().size() && i < diff.keys.size(); ++i) {
    const size_t at = static_cast<size_t>(index_of(keys, attribution.keys()[i]));
    work.resize(keys.size());
    work[at] += diff.keys[i];
  }
  for (size_t i = 0; i < attribution.ops().size() && i < diff.ops.size(); ++i) {
    const size_t at = static_cast<size_t>(index_of(ops, attribution.ops()[i]));
    op_work.resize(ops.size());
    op_work[at] += diff.ops[i];
  }
  other += diff.other;
  ++steps;
}

namespace {

template <class W, class F>
void each_work_counter(W& w, F&& f) {
  for (auto* v : {&w.pushes, &w.macs, &w.busy_cycles, &w.tile_imbalance, &w.term.macs,
                  &w.term.pe_steps, &w.term.tile_steps, &w.term.cycles, &w.term.terms_processed,
                  &w.term.terms_skipped_zero, &w.term.terms_skipped_oob, &w.term.pe_stall_cycles,
                  &w.term.lane_idle_cycles, &w.cycles, &w.hbm_bytes})
    f(*v);
}

nlohmann::ordered_json counters_json(const core::MxuWork& w) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  each_work_counter(w, [&](int64_t v) { a.push_back(v); });
  return a;
}

core::MxuWork counters_from(const nlohmann::ordered_json& a, const std::string& path) {
  core::MxuWork w;
  size_t i = 0;
  if (!a.is_array() || a.size() != 15)
    throw Error(path, "corrupt checkpoint progress (pe counters)");
  each_work_counter(w, [&](int64_t& v) {
    if (!a[i].is_number_integer()) throw Error(path, "corrupt checkpoint progress (pe counters)");
    v = a[i++].get<int64_t>();
  });
  return w;
}

}  // namespace

nlohmann::ordered_json PeTally::to_json() const {
  nlohmann::ordered_json j;
  j["steps"] = steps;
  j["other"] = counters_json(other);
  j["keys"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < keys.size(); ++i)
    j["keys"].push_back({{"layer", keys[i].layer},
                         {"phase", compiler::to_string(keys[i].phase)},
                         {"kind", compiler::to_string(keys[i].kind)},
                         {"work", counters_json(work[i])}});
  j["ops"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < ops.size(); ++i)
    j["ops"].push_back({{"op", ops[i]}, {"work", counters_json(op_work[i])}});
  return j;
}

PeTally PeTally::from_json(const nlohmann::ordered_json& j, const std::string& path) {
  const std::string bad = "corrupt checkpoint progress (pe)";
  if (!j.is_object() || !j.contains("steps") || !j["steps"].is_number_integer() ||
      !j.contains("other") || !j.contains("keys") || !j["keys"].is_array())
    throw Error(path, bad);
  PeTally t;
  t.steps = j["steps"].get<int64_t>();
  t.other = counters_from(j["other"], path);
  for (const auto& k : j["keys"]) {
    if (!k.is_object() || !k.contains("layer") || !k["layer"].is_string() || !k.contains("phase") ||
        !k.contains("work"))
      throw Error(path, bad);
    PeKey key{k["layer"].get<std::string>(), compiler::MxuPhase::kForward};
    int p = 0;
    while (p < compiler::kNumMxuPhases &&
           k["phase"] != compiler::to_string(static_cast<compiler::MxuPhase>(p)))
      ++p;
    if (p == compiler::kNumMxuPhases) throw Error(path, bad);
    key.phase = static_cast<compiler::MxuPhase>(p);
    if (k.contains("kind")) {
      int kind = 0;
      while (kind < compiler::kNumMxuLayerKinds &&
             k["kind"] != compiler::to_string(static_cast<compiler::MxuLayerKind>(kind)))
        ++kind;
      if (kind == compiler::kNumMxuLayerKinds) throw Error(path, bad);
      key.kind = static_cast<compiler::MxuLayerKind>(kind);
    } else if (key.layer.starts_with("conv")) {
      key.kind = compiler::MxuLayerKind::kConv;
    }
    t.keys.push_back(key);
    t.work.push_back(counters_from(k["work"], path));
  }
  if (j.contains("ops")) {
    if (!j["ops"].is_array()) throw Error(path, bad);
    for (const auto& o : j["ops"]) {
      if (!o.is_object() || !o.contains("op") || !o["op"].is_string() || !o.contains("work"))
        throw Error(path, bad);
      t.ops.push_back(o["op"].get<std::string>());
      t.op_work.push_back(counters_from(o["work"], path));
    }
  }
  return t;
}

nlohmann::ordered_json pe_json(const core::CoreSpec& spec, const PeTally& tally) {
  const std::vector<PeKey>& keys = tally.keys;
  core::MxuWork total = tally.other, phases[compiler::kNumMxuPhases];
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (size_t i = 0; i < keys.size(); ++i) {
    const core::MxuWork& w = tally.work[i];
    total += w;
    phases[static_cast<int>(keys[i].phase)] += w;
    nlohmann::ordered_json j;
    j["layer"] = keys[i].layer;
    j["phase"] = compiler::to_string(keys[i].phase);
    j.update(work_json(spec, w));
    layers.push_back(std::move(j));
  }
  for (const core::MxuWork& w : tally.op_work) total += w;
  nlohmann::ordered_json r;
  r["pe"] = core::to_string(spec.mxu_pe);
  r["steps"] = tally.steps;
  r["area_ratio"] = spec.term.area_ratio;
  r["area_source"] = spec.term.area_source;
  r["total"] = work_json(spec, total);
  for (int p = 0; p < compiler::kNumMxuPhases; ++p)
    r["phases"][compiler::to_string(static_cast<compiler::MxuPhase>(p))] =
        work_json(spec, phases[p]);
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (size_t i = 0; i < tally.ops.size(); ++i) {
    const core::MxuWork& w = tally.op_work[i];
    kernels.push_back({{"op", tally.ops[i]},
                       {"cycles", w.cycles},
                       {"hbm_bytes", w.hbm_bytes},
                       {"cycle_share", total.cycles > 0 ? static_cast<double>(w.cycles) /
                                                              static_cast<double>(total.cycles)
                                                        : 0.0}});
  }
  r["layers"] = std::move(layers);
  r["kernels"] = std::move(kernels);
  r["other"] = work_json(spec, tally.other);
  return r;
}

nlohmann::ordered_json mxu_split_json(const PeTally& tally, int64_t mxu_busy, int64_t cycles,
                                      int mxu_count) {
  core::MxuWork kinds[compiler::kNumMxuLayerKinds];
  bool present[compiler::kNumMxuLayerKinds] = {};
  int64_t busy = 0;
  for (size_t i = 0; i < tally.keys.size(); ++i) {
    const int k = static_cast<int>(tally.keys[i].kind);
    kinds[k] += tally.work[i];
    present[k] = true;
    busy += tally.work[i].busy_cycles;
  }
  if (!present[static_cast<int>(compiler::MxuLayerKind::kAttention)]) return nullptr;
  nlohmann::ordered_json r;
  for (const compiler::MxuLayerKind kind :
       {compiler::MxuLayerKind::kAttention, compiler::MxuLayerKind::kDense,
        compiler::MxuLayerKind::kConv}) {
    const int k = static_cast<int>(kind);
    if (!present[k] && kind == compiler::MxuLayerKind::kConv) continue;
    const double b = static_cast<double>(kinds[k].busy_cycles);
    nlohmann::ordered_json j;
    j["macs"] = kinds[k].macs;
    j["busy_cycles"] = kinds[k].busy_cycles;
    const double share = busy > 0 ? b / static_cast<double>(busy) : 0.0;
    j["share"] = share;
    j["utilization"] = cycles > 0 ? share * static_cast<double>(mxu_busy) /
                                        (static_cast<double>(cycles) * mxu_count)
                                  : 0.0;
    r[compiler::to_string(kind)] = std::move(j);
  }
  return r;
}

}  // namespace tessera::runtime
