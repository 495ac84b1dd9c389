#include "runtime/training_run.h"

#include <bit>
#include <chrono>

#include <fmt/format.h>

#include "common/error.h"
#include "core/energy.h"
#include "graph/optimizer.h"
#include "runtime/hbm_report.h"

namespace tessera::runtime {

namespace {

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
  auto& e = c.events;
  f("bundles", e.bundles);
  for (size_t u = 0; u < e.unit_ops.size(); ++u) f(fmt::format("unit_ops_{}", u), e.unit_ops[u]);
  f("scalar_ops", e.scalar_ops);
  f("vector_elements", e.vector_elements);
  f("vreg_elements", e.vreg_elements);
  f("ext_elements", e.ext_elements);
  f("smem_read_bytes", e.smem_read_bytes);
  f("smem_write_bytes", e.smem_write_bytes);
  f("vmem_read_bytes", e.vmem_read_bytes);
  f("vmem_write_bytes", e.vmem_write_bytes);
  f("hbm_read_bytes", e.hbm_read_bytes);
  f("hbm_write_bytes", e.hbm_write_bytes);
  f("dma_requests", e.dma_requests);
  f("dma_bytes", e.dma_bytes);
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

template <class T>
T progress_field(const nlohmann::ordered_json& p, const char* key, const std::string& path) {
  if (!p.contains(key))
    throw Error(path, fmt::format("corrupt checkpoint progress (no '{}')", key));
  try {
    return p[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(path, fmt::format("corrupt checkpoint progress ('{}' has the wrong type)", key));
  }
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

}  // namespace

TrainingRun::TrainingRun(const Dataset& train, const Dataset& test, TrainingRunOptions options)
    : m_train(train), m_test(test), m_options(std::move(options)) {
  if (m_options.epochs < 1) throw Error("train", "--epochs must be >= 1");
  if (m_options.checkpoint_every < 0) throw Error("train", "--checkpoint-every must be >= 0");
  if (m_options.checkpoint_keep < 1) throw Error("train", "checkpoints to keep must be >= 1");
  if (m_options.checkpoint_every > 0 && m_options.checkpoint_dir.empty())
    throw Error("train", "--checkpoint-every needs --checkpoint-dir");
  if (m_options.resume && m_options.checkpoint_dir.empty())
    throw Error("train", "--resume needs --checkpoint-dir");
  if (train.count < 1 || test.count < 1) throw Error("train", "empty training or test set");
  for (const Dataset* d : {&train, &test}) check_fits_model(*d, m_options.model);
  m_trainer =
      std::make_unique<ChipTrainer>(m_options.model, m_options.config.spec, m_options.trainer);
  if (m_options.resume)
    resume();
  else
    refuse_existing_checkpoints(m_options.checkpoint_dir);
}

TrainingRun::~TrainingRun() = default;

nlohmann::ordered_json training_identity(const Dataset& train, const Dataset& test,
                                         const TrainingRunOptions& options) {
  const graph::OptimizerConfig& o = options.trainer.optimizer;
  nlohmann::ordered_json id;
  id["model"] = options.model_name;
  id["dataset"] = train.name;
  id["train_samples"] = train.count;
  id["test_samples"] = test.count;
  id["config"] = options.config.spec.name;
  id["config_hash"] = options.config.hash;
  id["optimizer"] = o.kind == graph::OptimizerKind::kAdam ? "adam" : "sgd";
  id["lr"] = o.lr;
  id["momentum"] = o.momentum;
  id["beta1"] = o.beta1;
  id["beta2"] = o.beta2;
  id["eps"] = o.eps;
  id["batch"] = options.trainer.batch;
  id["seed"] = options.trainer.seed;
  id["steps_per_epoch_limit"] = options.steps_limit;
  id["host_bytes_per_second"] = options.trainer.host_bytes_per_second;
  return id;
}

nlohmann::ordered_json TrainingRun::identity() const {
  return training_identity(m_train, m_test, m_options);
}

void TrainingRun::resume() {
  std::string path;
  const Checkpoint c = read_newest_checkpoint(m_options.checkpoint_dir, &path);
  if (c.identity.is_object() && c.identity.contains("run"))
    throw Error(path,
                "was written by a data-parallel run (--chips); resume it with the same --chips");
  check_identity(path, c.identity, identity());
  const nlohmann::ordered_json& p = c.progress;
  m_epoch = progress_field<int>(p, "epoch", path);
  m_step = progress_field<int64_t>(p, "step", path);
  const int64_t global = progress_field<int64_t>(p, "global_step", path);
  m_loss_sum = std::bit_cast<double>(progress_field<uint64_t>(p, "loss_sum_bits", path));
  m_samples = progress_field<int64_t>(p, "samples", path);
  if (!p.contains("counters") || !p.contains("epochs") || !p["epochs"].is_array() || m_epoch < 0 ||
      m_step < 0 || global < 0 || static_cast<int64_t>(p["epochs"].size()) != m_epoch)
    throw Error(path, "corrupt checkpoint progress (inconsistent position)");
  m_counters = counters_from_json(p["counters"], path);
  m_opt_steps = costs_from_json(
      p.contains("optimizer_steps") ? p["optimizer_steps"] : nlohmann::ordered_json(), path);
  if (static_cast<int64_t>(m_opt_steps.size()) != m_step)
    throw Error(path, "corrupt checkpoint progress (optimizer per-step costs)");
  if (p.contains("pe")) m_pe = PeTally::from_json(p["pe"], path);
  m_epochs = p["epochs"];
  try {
    m_trainer->set_params(c.params);
    m_trainer->set_optimizer_state(c.state);
  } catch (const Error& e) {
    throw Error(path, std::string("does not fit this model: ") + e.what());
  }
  m_trainer->set_steps(global);
  m_resumed_from = path;
}

void TrainingRun::save(int epoch) {
  Checkpoint c;
  c.identity = identity();
  c.progress["epoch"] = epoch;
  c.progress["step"] = m_step;
  c.progress["global_step"] = m_trainer->steps();
  c.progress["loss_sum_bits"] = std::bit_cast<uint64_t>(m_loss_sum);
  c.progress["samples"] = m_samples;
  c.progress["counters"] = counters_to_json(m_counters);
  c.progress["optimizer_steps"] = costs_to_json(m_opt_steps);
  c.progress["pe"] = m_pe.to_json();
  c.progress["epochs"] = m_epochs;
  c.params = m_trainer->params();
  c.state = m_trainer->optimizer_state();
  save_checkpoint(m_options.checkpoint_dir, m_trainer->steps(), c, m_options.checkpoint_keep);
}

StepCounters TrainingRun::snapshot() const {
  const core::Core& c = m_trainer->core();
  StepCounters s;
  s.cycles = c.cycles();
  s.mxu_busy = c.unit_busy_cycles(isa::Unit::Mxu);
  s.vector_busy = c.unit_busy_cycles(isa::Unit::Vector);
  s.macs = c.machine().mxu().stats().macs;
  s.terms_processed = c.machine().mxu().stats().term.terms_processed;
  s.pe_steps = c.machine().mxu().stats().term.pe_steps;
  s.hbm = c.machine().hbm_encoder().traffic();
  s.host_bytes = m_trainer->host_link_bytes();
  s.events = c.machine().events();
  return s;
}

bool TrainingRun::run(const TrainingCallbacks& cb) {
  Batcher batches(m_train, m_options.trainer.batch, m_options.trainer.seed, true);
  const bool checkpoints = !m_options.checkpoint_dir.empty();
  Batch b;
  for (; m_epoch < m_options.epochs; ++m_epoch) {
    const auto wall0 = std::chrono::steady_clock::now();
    batches.start_epoch(m_epoch);
    const int64_t total = m_options.steps_limit > 0
                              ? std::min(m_options.steps_limit, batches.batches_per_epoch())
                              : batches.batches_per_epoch();
    for (int64_t i = 0; i < m_step; ++i) batches.next(b);
    while (m_step < total && batches.next(b)) {
      const StepCounters before = snapshot();
      const PeWork pe_before = m_trainer->pe_attribution().work();
      m_loss_sum +=
          static_cast<double>(m_trainer->step(b.images.data(), b.labels.data(), b.size)) * b.size;
      add_difference(m_counters, snapshot(), before);
      m_pe.add_step(m_trainer->pe_attribution().keys(),
                    m_trainer->pe_attribution().work() - pe_before);
      m_opt_steps.push_back(m_trainer->last_optimizer_cost());
      m_samples += b.size;
      ++m_step;
      if (cb.progress)
        cb.progress(m_epoch, m_step, total, m_loss_sum / static_cast<double>(m_samples));
      if (checkpoints && m_options.checkpoint_every > 0 &&
          m_trainer->steps() % m_options.checkpoint_every == 0)
        save(m_epoch);
      if (cb.keep_going && !cb.keep_going(m_trainer->steps())) return false;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    m_epochs.push_back(finish_epoch(m_step, wall));
    if (cb.epoch_done) cb.epoch_done(m_epochs.back());
    m_step = 0;
    m_loss_sum = 0;
    m_samples = 0;
    m_counters = StepCounters{};
    m_pe = PeTally{};
    m_opt_steps.clear();
    if (checkpoints) save(m_epoch + 1);
  }
  return true;
}

// Fields of one epoch's report: epoch (1-based), steps, samples, loss (mean training loss over
// the epoch's steps), train_accuracy (+ train_accuracy_samples), test_accuracy, test_loss,
// sim_cycles, sim_chip_seconds (cycles / clock), sim_host_link_seconds, sim_seconds (chip + host
// link), samples_per_sim_second, mxu_utilization and vector_utilization (busy / cycles), energy_j
// (the core's plus the Adam unit's), energy_mxu_j (its MXU part, by the PE that ran) with
// energy_mxu_source (the formula and where its figures come from), average_power_w (chip energy /
// chip seconds), hbm_encoding (runtime/hbm_report.h: compression per tensor kind), optimizer
// (optimizer_json: sums and per-step lists), pe (the MXU work of the training steps per layer and
// phase: runtime/pe_attribution.h), host_seconds (wall time of the epoch in this
// process, evaluation included: the one figure a resume does not reproduce).
nlohmann::ordered_json TrainingRun::finish_epoch(int64_t steps, double wall_seconds) {
  const int batch = m_options.trainer.batch;
  graph::EvalResult tr, te;
  Batch b;
  Batcher ev(m_train, batch, m_options.trainer.seed, false);
  ev.start_epoch(0);
  while (tr.samples < m_test.count && ev.next(b))
    m_trainer->evaluate(b.images.data(), b.labels.data(), b.size, tr);
  Batcher test(m_test, batch, m_options.trainer.seed, false);
  test.start_epoch(0);
  while (test.next(b)) m_trainer->evaluate(b.images.data(), b.labels.data(), b.size, te);

  const StepCounters& c = m_counters;
  const double cycles = static_cast<double>(c.cycles);
  const double chip_s = cycles / m_options.config.spec.clock_hz;
  const double link_s = static_cast<double>(c.host_bytes) / m_options.trainer.host_bytes_per_second;
  const core::MxuEnergyCounts mxu{c.macs, c.terms_processed, c.pe_steps};
  const double energy_j =
      core::energy_total_pj(core::energy_parts(m_options.config.spec, c.events, mxu, c.cycles)) *
          1e-12 +
      sum_costs(m_opt_steps).unit_energy_uj * 1e-6;
  nlohmann::ordered_json j;
  j["epoch"] = m_epoch + 1;
  j["steps"] = steps;
  j["samples"] = m_samples;
  j["loss"] = ratio(m_loss_sum, static_cast<double>(m_samples));
  j["train_accuracy"] = ratio(static_cast<double>(tr.correct), static_cast<double>(tr.samples));
  j["train_accuracy_samples"] = tr.samples;
  j["test_accuracy"] = ratio(static_cast<double>(te.correct), static_cast<double>(te.samples));
  j["test_loss"] = ratio(te.loss_sum, static_cast<double>(te.samples));
  j["sim_cycles"] = c.cycles;
  j["sim_chip_seconds"] = chip_s;
  j["sim_host_link_seconds"] = link_s;
  j["sim_seconds"] = chip_s + link_s;
  j["samples_per_sim_second"] = ratio(static_cast<double>(m_samples), chip_s + link_s);
  j["mxu_utilization"] = ratio(static_cast<double>(c.mxu_busy), cycles);
  j["vector_utilization"] = ratio(static_cast<double>(c.vector_busy), cycles);
  j["energy_j"] = energy_j;
  j["energy_mxu_j"] = core::mxu_energy_pj(m_options.config.spec, mxu) * 1e-12;
  j["energy_mxu_source"] = core::mxu_energy_source(m_options.config.spec);
  j["average_power_w"] = ratio(energy_j, chip_s);
  j["host_seconds"] = wall_seconds;
  j["optimizer"] = optimizer_json(m_opt_steps, c.cycles);
  j["pe"] = pe_json(m_options.config.spec, m_pe);
  j["hbm_encoding"] = hbm_encoding_json(m_options.config.spec.hbm_encoding, c.hbm);
  return j;
}

nlohmann::ordered_json TrainingRun::report() const {
  nlohmann::ordered_json r;
  const nlohmann::ordered_json id = identity();
  for (const char* k :
       {"model", "dataset", "optimizer", "batch", "lr", "seed", "config", "config_hash"})
    r[k] = id[k];
  r["clock_hz"] = m_options.config.spec.clock_hz;
  r["resumed_from"] = m_resumed_from;
  r["resolved_config"] = m_options.config.resolved;
  r["epochs"] = m_epochs;
  return r;
}

}  // namespace tessera::runtime
