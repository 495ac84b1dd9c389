#include "runtime/run_loop.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "graph/optimizer.h"

namespace tessera::runtime {

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

void put_quality(nlohmann::ordered_json& j, const EpochResult& e) {
  j["loss"] = ratio(e.loss_sum, static_cast<double>(e.samples));
  j["train_accuracy"] =
      ratio(static_cast<double>(e.train.correct), static_cast<double>(e.train.predictions));
  j["train_accuracy_samples"] = e.train.samples;
  j["test_accuracy"] =
      ratio(static_cast<double>(e.test.correct), static_cast<double>(e.test.predictions));
  j["test_loss"] = ratio(e.test.loss_sum, static_cast<double>(e.test.samples));
}

void put_epoch(nlohmann::ordered_json& j, const EpochResult& e) {
  j["epoch"] = e.epoch + 1;
  j["steps"] = e.steps;
  j["samples"] = e.samples;
  put_quality(j, e);
}

nlohmann::ordered_json training_identity(const Dataset& train, const Dataset& test,
                                         const RunOptions& run, const ChipTrainerOptions& trainer) {
  const graph::OptimizerConfig& o = trainer.optimizer;
  nlohmann::ordered_json id;
  id["model"] = run.model_name;
  if (const auto& g = run.model.gpt)
    id["gpt"] = {{"d_model", g->d_model},
                 {"heads", g->heads},
                 {"layers", g->layers},
                 {"context", g->context}};
  if (const auto& b = run.model.bert)
    id["bert"] = {{"d_model", b->d_model},
                  {"heads", b->heads},
                  {"layers", b->layers},
                  {"seq", b->seq},
                  {"vocab", b->vocab}};
  id["dataset"] = train.name;
  id["train_samples"] = train.count;
  id["test_samples"] = test.count;
  id["config"] = run.config.spec.name;
  id["config_hash"] = run.config.hash;
  id["optimizer"] = o.kind == graph::OptimizerKind::kAdam ? "adam" : "sgd";
  id["lr"] = o.lr;
  id["momentum"] = o.momentum;
  id["beta1"] = o.beta1;
  id["beta2"] = o.beta2;
  id["eps"] = o.eps;
  id["batch"] = trainer.batch;
  id["seed"] = trainer.seed;
  id["steps_per_epoch_limit"] = run.steps_limit;
  id["host_bytes_per_second"] = trainer.host_bytes_per_second;
  return id;
}

namespace {

// Evaluation hands the trainer this many batches at a time (Trainer::evaluate_batches): enough
// for every host thread and rank, few enough to hold at once.
constexpr int kEvalBatchesAtOnce = 64;

// Calls f() and adds its host wall seconds to `seconds`.
template <class F>
void timed(double& seconds, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The kind of run an identity is for: its "run" ("data-parallel", ...); null for single-chip runs.
nlohmann::ordered_json run_kind(const nlohmann::ordered_json& identity) {
  return identity.is_object() && identity.contains("run") ? identity["run"]
                                                          : nlohmann::ordered_json();
}

// Why a checkpoint of another kind of run is refused: the kind it was written by.
std::string written_by(const nlohmann::ordered_json& identity) {
  const nlohmann::ordered_json kind = run_kind(identity);
  if (kind.is_null())
    return "was written by a single-chip run (no --chips); resume it without --chips";
  if (kind == "data-parallel")
    return "was written by a data-parallel run (--chips); resume it with the same --chips";
  return fmt::format("was written by a {} run", kind.dump());
}

}  // namespace

RunLoop::RunLoop(const Dataset& train, const Dataset& test, RunOptions options,
                 const std::function<std::unique_ptr<Trainer>()>& make_trainer)
    : m_train(train), m_test(test), m_options(std::move(options)) {
  // The options of `tessera train`'s flags: a value refused here is a command-line error.
  if (m_options.epochs < 1) throw UsageError("train", "--epochs must be >= 1");
  if (m_options.checkpoint_every < 0) throw UsageError("train", "--checkpoint-every must be >= 0");
  if (m_options.checkpoint_keep < 1) throw UsageError("train", "--checkpoint-keep must be >= 1");
  if (m_options.eval_every < 0) throw UsageError("train", "--eval-every must be >= 0");
  if (m_options.checkpoint_every > 0 && m_options.checkpoint_dir.empty())
    throw UsageError("train", "--checkpoint-every needs --checkpoint-dir");
  if (m_options.resume && m_options.checkpoint_dir.empty())
    throw UsageError("train", "--resume needs --checkpoint-dir");
  if (train.count < 1 || test.count < 1) throw Error("train", "empty training or test set");
  for (const Dataset* d : {&train, &test}) check_fits_model(*d, m_options.model);
  timed(m_build_seconds, [&] { m_trainer = make_trainer(); });
  if (m_options.resume)
    timed(m_checkpoint_seconds, [&] { resume(); });
  else
    refuse_existing_checkpoints(m_options.checkpoint_dir);
  if (!m_options.checkpoint_dir.empty() && m_trainer->writes_files())
    prepare_checkpoint_dir(m_options.checkpoint_dir);
}

RunLoop::~RunLoop() = default;

nlohmann::ordered_json RunLoop::identity() const {
  return m_trainer->identity(training_identity(m_train, m_test, m_options, m_trainer->options()));
}

void RunLoop::resume() {
  std::string path;
  const Checkpoint c = read_newest_checkpoint(m_options.checkpoint_dir, &path);
  const nlohmann::ordered_json expected = identity();
  if (run_kind(c.identity) != run_kind(expected)) throw Error(path, written_by(c.identity));
  nlohmann::ordered_json stored = c.identity;
  const nlohmann::ordered_json defaults = m_trainer->identity_defaults();
  for (const auto& [key, value] : defaults.items())
    if (!stored.contains(key)) stored[key] = value;
  check_identity(path, stored, expected);
  const nlohmann::ordered_json& p = c.progress;
  m_epoch = progress_field<int>(p, "epoch", path);
  m_step = progress_field<int64_t>(p, "step", path);
  m_loss_sum = std::bit_cast<double>(progress_field<uint64_t>(p, "loss_sum_bits", path));
  m_samples = progress_field<int64_t>(p, "samples", path);
  if (!p.contains("epochs") || !p["epochs"].is_array() || m_epoch < 0 || m_step < 0 ||
      static_cast<int64_t>(p["epochs"].size()) != m_epoch)
    throw Error(path, "corrupt checkpoint progress (inconsistent position)");
  m_epochs = p["epochs"];
  m_evals = nlohmann::ordered_json::array();
  if (p.contains("evals")) {
    if (!p["evals"].is_array()) throw Error(path, "corrupt checkpoint progress (evals)");
    m_evals = p["evals"];
  }
  m_trainer->restore(c, m_step, path);
  m_resumed_from = path;
}

void RunLoop::save(int epoch) {
  Checkpoint c;
  c.identity = identity();
  c.progress["epoch"] = epoch;
  c.progress["step"] = m_step;
  c.progress["loss_sum_bits"] = std::bit_cast<uint64_t>(m_loss_sum);
  c.progress["samples"] = m_samples;
  m_trainer->save(c);  // collective in a distributed run
  if (!m_evals.empty()) c.progress["evals"] = m_evals;
  c.progress["epochs"] = m_epochs;
  if (m_trainer->writes_files())
    save_checkpoint(m_options.checkpoint_dir, m_trainer->steps(), c, m_options.checkpoint_keep);
}

nlohmann::ordered_json RunLoop::host_phases_json(double load_seconds) const {
  return {{"load_seconds", load_seconds},
          {"build_seconds", m_build_seconds},
          {"train_seconds", m_train_seconds},
          {"eval_seconds", m_eval_seconds},
          {"checkpoint_seconds", m_checkpoint_seconds}};
}

bool RunLoop::run(const TrainingCallbacks& cb) {
  const ChipTrainerOptions& t = m_trainer->options();
  Batcher batches(m_train, t.batch, t.seed, true);
  const bool checkpoints = !m_options.checkpoint_dir.empty();
  Batch b;
  for (; m_epoch < m_options.epochs; ++m_epoch) {
    const auto wall0 = std::chrono::steady_clock::now();
    const double outside0 = m_eval_seconds + m_checkpoint_seconds;
    batches.start_epoch(m_epoch);
    const int64_t total = m_options.steps_limit > 0
                              ? std::min(m_options.steps_limit, batches.batches_per_epoch())
                              : batches.batches_per_epoch();
    for (int64_t i = 0; i < m_step; ++i) batches.next(b);
    while (m_step < total && batches.next(b)) {
      ++m_step;
      const std::optional<double> loss = m_trainer->step(b);
      if (!loss) continue;
      m_loss_sum += *loss * b.size;
      m_samples += b.size;
      if (cb.progress)
        cb.progress(m_epoch, m_step, total, m_loss_sum / static_cast<double>(m_samples));
      if (m_options.eval_every > 0 && m_trainer->steps() % m_options.eval_every == 0 &&
          m_step < total) {
        const graph::EvalResult t = evaluate_test();
        m_evals.push_back({{"step", m_trainer->steps()},
                           {"test_loss", ratio(t.loss_sum, static_cast<double>(t.samples))},
                           {"test_accuracy", ratio(static_cast<double>(t.correct),
                                                   static_cast<double>(t.predictions))}});
      }
      if (checkpoints && m_options.checkpoint_every > 0 &&
          m_trainer->steps() % m_options.checkpoint_every == 0)
        timed(m_checkpoint_seconds, [&] { save(m_epoch); });
      if (cb.keep_going && !cb.keep_going(m_trainer->steps())) return false;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    m_train_seconds += wall - (m_eval_seconds + m_checkpoint_seconds - outside0);
    m_epochs.push_back(finish_epoch(wall));
    if (cb.epoch_done) cb.epoch_done(m_epochs.back());
    m_step = 0;
    m_loss_sum = 0;
    m_samples = 0;
    m_evals = nlohmann::ordered_json::array();
    m_trainer->start_epoch();
    if (checkpoints) timed(m_checkpoint_seconds, [&] { save(m_epoch + 1); });
  }
  return true;
}

nlohmann::ordered_json RunLoop::finish_epoch(double wall_seconds) {
  EpochResult e;
  e.epoch = m_epoch;
  e.steps = m_step;
  e.samples = m_samples;
  e.loss_sum = m_loss_sum;
  e.wall_seconds = wall_seconds;
  e.train = evaluate(m_train, m_test.count);
  e.test = evaluate_test();
  nlohmann::ordered_json j = m_trainer->epoch_report(e);
  if (m_options.eval_every > 0) j["evals"] = m_evals;
  return j;
}

graph::EvalResult RunLoop::evaluate_test() {
  return evaluate(m_test, m_test.count);
}

graph::EvalResult RunLoop::evaluate(const Dataset& data, int64_t samples) {
  graph::EvalResult r;
  timed(m_eval_seconds, [&] {
    Batcher file_order(data, m_trainer->options().batch, m_trainer->options().seed, false);
    file_order.start_epoch(0);
    std::vector<Batch> group;  // at most kEvalBatchesAtOnce, evaluated together
    for (int64_t taken = 0; taken < samples;) {
      Batch b;
      if (!file_order.next(b)) break;
      taken += b.size;
      group.push_back(std::move(b));
      if (static_cast<int>(group.size()) == kEvalBatchesAtOnce) {
        m_trainer->evaluate_batches(group, r);
        group.clear();
      }
    }
    if (!group.empty()) m_trainer->evaluate_batches(group, r);
  });
  return r;
}

nlohmann::ordered_json RunLoop::report() const {
  nlohmann::ordered_json r;
  const nlohmann::ordered_json id =
      training_identity(m_train, m_test, m_options, m_trainer->options());
  for (const char* k :
       {"model", "dataset", "optimizer", "batch", "lr", "seed", "config", "config_hash"})
    r[k] = id[k];
  r["clock_hz"] = m_options.config.spec.clock_hz;
  m_trainer->report_machine(r);
  r["resumed_from"] = m_resumed_from;
  m_trainer->report_statistics(r);
  r["resolved_config"] = m_options.config.resolved;
  r["epochs"] = m_epochs;
  return r;
}

}  // namespace tessera::runtime
