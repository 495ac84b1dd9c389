#include "runtime/training_run.h"

#include <fmt/format.h>

#include "common/error.h"
#include "core/energy.h"
#include "core/events.h"
#include "core/hbm_encoding.h"
#include "core/sparse_core.h"
#include "runtime/hbm_report.h"

namespace tessera::runtime {

namespace {

// Integer machine counters of training steps (summed per-step differences).
struct StepCounters {
  int64_t cycles = 0, mxu_busy = 0, vector_busy = 0, macs = 0, host_bytes = 0;
  int64_t terms_processed = 0, pe_steps = 0;  // term-serial MXU work (its energy)
  core::EventCounts events;
  core::HbmTrafficByKind hbm{};    // encoded HBM traffic per tensor kind (core/hbm_encoding.h)
  core::SparseCoreStats sparse{};  // the sparse core's work (gpt's embedding on the sparse core)
};

// Calls f(name, field) for every integer counter of `c` (one list for add, subtract, save, load).
template <class C, class F>
void each_counter(C& c, F&& f) {
  f("cycles", c.cycles);
  f("mxu_busy", c.mxu_busy);
  f("vector_busy", c.vector_busy);
  f("macs", c.macs);
  f("host_bytes", c.host_bytes);
  f("terms_processed", c.terms_processed);
  f("pe_steps", c.pe_steps);
  core::for_each_counter(c.events, f);
#define X(field, what) f("sparse_" #field, c.sparse.field);
#include "core/sparse_counters.def"
#undef X
  for (int k = 0; k < core::kNumHbmKinds; ++k) {
    auto& t = c.hbm[static_cast<size_t>(k)];
    const char* kind = core::to_string(static_cast<core::HbmKind>(k));
    f(fmt::format("hbm_{}_requests", kind), t.requests);
    f(fmt::format("hbm_{}_raw_bytes", kind), t.raw_bytes);
    f(fmt::format("hbm_{}_encoded_bytes", kind), t.encoded_bytes);
  }
}

// acc += after - before, counter by counter.
void add_difference(StepCounters& acc, const StepCounters& after, const StepCounters& before) {
  std::vector<int64_t> a, b;
  each_counter(after, [&](const auto&, int64_t v) { a.push_back(v); });
  each_counter(before, [&](const auto&, int64_t v) { b.push_back(v); });
  size_t i = 0;
  each_counter(acc, [&](const auto&, int64_t& v) {
    v += a[i] - b[i];
    ++i;
  });
}

nlohmann::ordered_json counters_to_json(const StepCounters& c) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  each_counter(c, [&](const auto& name, int64_t v) { j[std::string(name)] = v; });
  return j;
}

StepCounters counters_from_json(const nlohmann::ordered_json& j, const std::string& path) {
  StepCounters c;
  each_counter(c, [&](const auto& name, int64_t& v) {
    const std::string key(name);
    if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer())
      throw Error(path, fmt::format("corrupt checkpoint progress (counter '{}')", key));
    v = j[key].get<int64_t>();
  });
  return c;
}

// The single-chip Trainer: a ChipTrainer and the epoch's machine figures (training_run.h).
class SingleChipTrainer final : public Trainer {
 public:
  explicit SingleChipTrainer(const TrainingRunOptions& options)
      : m_spec(options.config.spec),
        m_options(options.trainer),
        m_context(options.model.context()),
        m_chip(options.model, options.config.spec, options.trainer) {}

  const ChipTrainer& chip() const { return m_chip; }

  const ChipTrainerOptions& options() const override { return m_options; }
  int64_t steps() const override { return m_chip.steps(); }

  std::optional<double> step(const Batch& b) override {
    const StepCounters before = snapshot();
    const PeWork pe_before = m_chip.pe_attribution().work();
    const float loss = step_on(m_chip, b);
    const StepCounters after = snapshot();
    add_difference(m_counters, after, before);
    m_step_loss.push_back(static_cast<double>(loss));
    m_step_cycles.push_back(after.cycles - before.cycles);
    m_pe.add_step(m_chip.pe_attribution(), m_chip.pe_attribution().work() - pe_before);
    m_opt_steps.push_back(m_chip.last_optimizer_cost());
    return static_cast<double>(loss);
  }

  void evaluate(const Batch& b, graph::EvalResult& acc) override { evaluate_on(m_chip, b, acc); }

  Tensors parameters() const override { return m_chip.params(); }

  void start_epoch() override {
    m_counters = StepCounters{};
    m_pe = PeTally{};
    m_opt_steps.clear();
    m_step_loss.clear();
    m_step_cycles.clear();
  }

  nlohmann::ordered_json epoch_report(const EpochResult& e) override;

  nlohmann::ordered_json identity(const nlohmann::ordered_json& common) const override {
    return common;
  }

  void save(Checkpoint& c) const override {
    c.progress["global_step"] = m_chip.steps();
    c.progress["counters"] = counters_to_json(m_counters);
    c.progress["optimizer_steps"] = costs_to_json(m_opt_steps);
    c.progress["pe"] = m_pe.to_json();
    c.progress["step_loss"] = m_step_loss;
    c.progress["step_cycles"] = m_step_cycles;
    c.params = m_chip.params();
    c.state = m_chip.optimizer_state();
    for (std::vector<float>& s : m_chip.model_state()) c.state.push_back(std::move(s));
  }

  void restore(const Checkpoint& c, int64_t step, const std::string& path) override;

 private:
  StepCounters snapshot() const;

  core::CoreSpec m_spec;
  ChipTrainerOptions m_options;
  int m_context;  // text models: bytes per window (tokens per sample); 0 for image models
  ChipTrainer m_chip;
  // The epoch in progress.
  StepCounters m_counters;
  std::vector<OptimizerCost> m_opt_steps;  // the epoch's optimizer updates so far, one per step
  PeTally m_pe;  // the epoch's MXU work per layer and phase (pe_attribution.h)
  // The epoch's steps so far: loss and simulated cycles of each (empty after resuming from a
  // checkpoint that does not keep them: the epoch's report then has no per_step).
  std::vector<double> m_step_loss;
  std::vector<int64_t> m_step_cycles;
};

StepCounters SingleChipTrainer::snapshot() const {
  const core::Core& c = m_chip.core();
  StepCounters s;
  s.cycles = c.cycles();
  s.mxu_busy = c.unit_busy_cycles(isa::Unit::Mxu);
  s.vector_busy = c.unit_busy_cycles(isa::Unit::Vector);
  s.macs = c.machine().mxu().stats().macs;
  s.terms_processed = c.machine().mxu().stats().term.terms_processed;
  s.pe_steps = c.machine().mxu().stats().term.pe_steps;
  s.hbm = c.machine().hbm_encoder().traffic();
  s.host_bytes = m_chip.host_link_bytes();
  s.events = c.machine().events();
  s.sparse = c.machine().sparse().stats();
  return s;
}

void SingleChipTrainer::restore(const Checkpoint& c, int64_t step, const std::string& path) {
  const nlohmann::ordered_json& p = c.progress;
  const int64_t global = progress_field<int64_t>(p, "global_step", path);
  if (!p.contains("counters") || global < 0)
    throw Error(path, "corrupt checkpoint progress (inconsistent position)");
  m_counters = counters_from_json(p["counters"], path);
  m_opt_steps = costs_from_json(
      p.contains("optimizer_steps") ? p["optimizer_steps"] : nlohmann::ordered_json(), path);
  if (static_cast<int64_t>(m_opt_steps.size()) != step)
    throw Error(path, "corrupt checkpoint progress (optimizer per-step costs)");
  if (p.contains("pe")) m_pe = PeTally::from_json(p["pe"], path);
  m_step_loss.clear();
  m_step_cycles.clear();
  if (p.contains("step_loss") || p.contains("step_cycles")) {
    const bool ok = p.contains("step_loss") && p["step_loss"].is_array() &&
                    p.contains("step_cycles") && p["step_cycles"].is_array() &&
                    static_cast<int64_t>(p["step_loss"].size()) == step &&
                    p["step_cycles"].size() == p["step_loss"].size();
    if (!ok) throw Error(path, "corrupt checkpoint progress (per-step loss and cycles)");
    for (size_t i = 0; i < p["step_loss"].size(); ++i) {
      const auto &l = p["step_loss"][i], &c = p["step_cycles"][i];
      if (!l.is_number() || !c.is_number_integer())
        throw Error(path, "corrupt checkpoint progress (per-step loss and cycles)");
      m_step_loss.push_back(l.get<double>());
      m_step_cycles.push_back(c.get<int64_t>());
    }
  }
  try {
    m_chip.set_params(c.params);
    const auto [optimizer, model] = split_checkpoint_state(c.state, m_chip.layout());
    m_chip.set_optimizer_state(optimizer);
    m_chip.set_model_state(model);
  } catch (const Error& e) {
    throw Error(path, std::string("does not fit this model: ") + e.what());
  }
  m_chip.set_steps(global);
}

// Fields of one epoch's report: epoch (1-based), steps, samples, put_quality's (loss,
// train_accuracy, train_accuracy_samples, test_accuracy, test_loss), sim_cycles, sim_chip_seconds
// (cycles / clock), sim_host_link_seconds, sim_seconds (chip + host link), samples_per_sim_second,
// tokens_per_sim_second (gpt: samples x context / sim_seconds), mxu_utilization, mxu_split (models
// with attention: the MXU work of attention and dense layers, pe_attribution.h's mxu_split_json)
// and vector_utilization (busy / cycles), energy_j (the core's plus the Adam unit's plus the
// sparse core's), energy_sparse_core_j (its sparse-core part; only when the sparse core ran),
// energy_mxu_j (its MXU part, by the PE that ran) with energy_mxu_source (the formula and
// where its figures come from), average_power_w (chip energy / chip seconds), host_seconds (wall
// time of the epoch's steps in this process: the one figure a resume does not reproduce),
// optimizer (optimizer_json: sums and per-step lists), pe (the MXU work of the training steps per
// layer and phase: runtime/pe_attribution.h), hbm_encoding (runtime/hbm_report.h: compression per
// tensor kind), per_step ({"loss": [..], "cycles": [..]}: each training step's loss and simulated
// cycles, the optimizer update included; absent when resumed from a checkpoint without them),
// program_bundles (the training step's program at the run's batch: its bundles, which must fit
// core.scalar.imem_bundles).
nlohmann::ordered_json SingleChipTrainer::epoch_report(const EpochResult& e) {
  const StepCounters& c = m_counters;
  const double cycles = static_cast<double>(c.cycles);
  const double chip_s = cycles / m_spec.clock_hz;
  const double link_s = static_cast<double>(c.host_bytes) / m_options.host_bytes_per_second;
  const core::MxuEnergyCounts mxu{c.macs, c.terms_processed, c.pe_steps};
  const double sparse_j =
      core::sparse_core_energy(m_spec.sparse, c.sparse, m_spec.energy.hbm_byte_pj).total * 1e-12;
  const double energy_j =
      core::energy_total_pj(core::energy_parts(m_spec, c.events, mxu, c.cycles)) * 1e-12 +
      sum_costs(m_opt_steps).unit_energy_uj * 1e-6 + sparse_j;
  nlohmann::ordered_json j;
  put_epoch(j, e);
  j["sim_cycles"] = c.cycles;
  j["sim_chip_seconds"] = chip_s;
  j["sim_host_link_seconds"] = link_s;
  j["sim_seconds"] = chip_s + link_s;
  j["samples_per_sim_second"] = ratio(static_cast<double>(e.samples), chip_s + link_s);
  if (m_context > 0)
    j["tokens_per_sim_second"] = ratio(static_cast<double>(e.samples) * m_context, chip_s + link_s);
  j["mxu_utilization"] = ratio(static_cast<double>(c.mxu_busy), cycles * m_spec.mxu_count);
  if (const nlohmann::ordered_json split =
          mxu_split_json(m_pe, c.mxu_busy, c.cycles, m_spec.mxu_count);
      !split.is_null())
    j["mxu_split"] = split;
  j["vector_utilization"] = ratio(static_cast<double>(c.vector_busy), cycles);
  j["energy_j"] = energy_j;
  j["energy_mxu_j"] = core::mxu_energy_pj(m_spec, mxu) * 1e-12;
  j["energy_mxu_source"] = core::mxu_energy_source(m_spec);
  if (c.sparse.descriptors > 0) j["energy_sparse_core_j"] = sparse_j;
  j["average_power_w"] = ratio(energy_j, chip_s);
  j["host_seconds"] = e.wall_seconds;
  j["optimizer"] = optimizer_json(m_opt_steps, c.cycles);
  j["pe"] = pe_json(m_spec, m_pe);
  j["hbm_encoding"] = hbm_encoding_json(m_spec.hbm_encoding, c.hbm);
  if (m_step_loss.size() == m_opt_steps.size())
    j["per_step"] = {{"loss", m_step_loss}, {"cycles", m_step_cycles}};
  j["program_bundles"] = m_chip.layout().program.code.size();
  return j;
}

}  // namespace

TrainingRun::TrainingRun(const Dataset& train, const Dataset& test,
                         const TrainingRunOptions& options)
    : RunLoop(train, test, options,
              [&options] { return std::make_unique<SingleChipTrainer>(options); }) {}

const ChipTrainer& TrainingRun::trainer() const {
  return static_cast<const SingleChipTrainer&>(RunLoop::trainer()).chip();
}

}  // namespace tessera::runtime
