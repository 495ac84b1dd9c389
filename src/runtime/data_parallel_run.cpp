#include "runtime/data_parallel_run.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <tuple>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/checkpoint.h"

namespace tessera::runtime {

namespace {

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

// The epoch's figures: totals now minus totals at its start.
DataParallelTotals difference(const DataParallelTotals& a, const DataParallelTotals& b) {
  DataParallelTotals d;
  d.steps = a.steps - b.steps;
  d.samples = a.samples - b.samples;
  d.supersteps = a.supersteps - b.supersteps;
  d.wall_ps = a.wall_ps - b.wall_ps;
  d.compute_ps = a.compute_ps - b.compute_ps;
  d.exchange_ps = a.exchange_ps - b.exchange_ps;
  d.link_busy_ps = a.link_busy_ps;
  for (size_t l = 0; l < b.link_busy_ps.size() && l < d.link_busy_ps.size(); ++l)
    d.link_busy_ps[l] -= b.link_busy_ps[l];
  d.exchange_bytes = a.exchange_bytes - b.exchange_bytes;
  d.wire_bytes = a.wire_bytes - b.wire_bytes;
  d.packets = a.packets - b.packets;
  d.retransmissions = a.retransmissions - b.retransmissions;
  d.host_bytes = a.host_bytes - b.host_bytes;
  d.host_link_seconds = a.host_link_seconds - b.host_link_seconds;
  return d;
}

}  // namespace

system::SystemSpec data_parallel_system(const system::SystemSpec& file, int chips,
                                        int cores_per_chip) {
  if (chips < 1) throw Error("train", fmt::format("--chips {}: need at least 1", chips));
  if (cores_per_chip < 0)
    throw Error("train", fmt::format("--cores-per-chip {}: need at least 1", cores_per_chip));
  system::SystemSpec s = file;
  if (file.chips > 1) {
    if (chips != file.chips)
      throw Error("train", fmt::format("--chips {} does not match the config's system.chips {}",
                                       chips, file.chips));
    if (cores_per_chip != 0 && cores_per_chip != file.cores_per_chip)
      throw Error(
          "train",
          fmt::format("--cores-per-chip {} does not match the config's system.cores_per_chip {}",
                      cores_per_chip, file.cores_per_chip));
    return s;
  }
  s.chips = chips;
  s.chips_per_board = chips;
  s.boards = 1;
  s.topology = chips > 2 ? system::Topology::kRing : system::Topology::kLine;
  if (cores_per_chip != 0) s.cores_per_chip = cores_per_chip;
  system::validate_system_spec(s);
  return s;
}

DataParallelRun::DataParallelRun(const Dataset& train, const Dataset& test,
                                 DataParallelRunOptions options)
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
      std::make_unique<DataParallelTrainer>(m_options.model, m_options.config.spec, m_options.dp);
  if (m_options.resume)
    resume();
  else
    refuse_existing_checkpoints(m_options.checkpoint_dir);
}

DataParallelRun::~DataParallelRun() = default;

nlohmann::ordered_json DataParallelRun::identity() const {
  const DataParallelOptions& o = m_options.dp;
  const system::SystemSpec& s = o.system;
  nlohmann::ordered_json id;
  id["run"] = "data-parallel";
  id["chips"] = s.chips;
  id["cores_per_chip"] = s.cores_per_chip;
  id["topology"] = system::topology_name(s.topology);
  id["boards"] = s.boards;
  id["chips_per_board"] = s.chips_per_board;
  id["processors"] = s.processors();
  id["rings"] = o.rings;
  id["directions"] = m_trainer->directions();
  id["allreduce"] = compiler::algorithm_name(o.allreduce);
  id["fabric_seed"] = o.fabric_seed;
  if (o.bucket_words > 0) {  // another bucketing reduces in another order
    id["bucket_words"] = o.bucket_words;
    id["overlap"] = o.overlap;
  }
  TrainingRunOptions single;
  single.model_name = m_options.model_name;
  single.config = m_options.config;
  single.trainer = o.trainer;
  single.steps_limit = m_options.steps_limit;
  const nlohmann::ordered_json rest = training_identity(m_train, m_test, single);
  for (const auto& [key, value] : rest.items()) id[key] = value;
  id["adam_on"] = o.trainer.adam_on == compiler::AdamOn::kUnit ? "unit" : "vector-unit";
  return id;
}

void DataParallelRun::resume() {
  std::string path;
  const Checkpoint c = read_newest_checkpoint(m_options.checkpoint_dir, &path);
  if (!c.identity.is_object() || !c.identity.contains("run"))
    throw Error(path, "was written by a single-chip run (no --chips); resume it without --chips");
  // Checkpoints written before the torus all-reduce existed have no "allreduce": they all used the
  // ring.
  nlohmann::ordered_json stored = c.identity;
  if (!stored.contains("allreduce"))
    stored["allreduce"] = compiler::algorithm_name(compiler::CollectiveAlgorithm::kRing);
  check_identity(path, stored, identity());
  const nlohmann::ordered_json& p = c.progress;
  try {
    m_epoch = p.at("epoch").get<int>();
    m_step = p.at("step").get<int64_t>();
    m_loss_sum = std::bit_cast<double>(p.at("loss_sum_bits").get<uint64_t>());
    m_samples = p.at("samples").get<int64_t>();
    m_skipped = p.at("skipped").get<int64_t>();
    m_single_core_s = std::bit_cast<double>(p.at("single_core_bits").get<uint64_t>());
    m_epochs = p.at("epochs");
  } catch (const nlohmann::json::exception&) {
    throw Error(path, "corrupt checkpoint progress (position)");
  }
  if (m_epoch < 0 || m_step < 0 || !m_epochs.is_array() ||
      static_cast<int64_t>(m_epochs.size()) != m_epoch || !p.contains("epoch_start") ||
      !p.contains("trainer"))
    throw Error(path, "corrupt checkpoint progress (inconsistent position)");
  m_epoch_start = totals_from_json(p["epoch_start"], path);
  m_trainer->restore(c.params, c.state, p["trainer"], path);
  m_resumed_from = path;
}

void DataParallelRun::save(int epoch) {
  Checkpoint c;
  c.identity = identity();
  std::tie(c.params, c.state) = m_trainer->replica_state();  // collective
  c.progress["epoch"] = epoch;
  c.progress["step"] = m_step;
  c.progress["loss_sum_bits"] = std::bit_cast<uint64_t>(m_loss_sum);
  c.progress["samples"] = m_samples;
  c.progress["skipped"] = m_skipped;
  c.progress["single_core_bits"] = std::bit_cast<uint64_t>(m_single_core_s);
  c.progress["epoch_start"] = totals_to_json(m_epoch_start);
  c.progress["trainer"] = m_trainer->save_state();  // collective
  c.progress["epochs"] = m_epochs;
  if (m_trainer->system().communicator().rank() == 0)
    save_checkpoint(m_options.checkpoint_dir, m_trainer->steps(), c, m_options.checkpoint_keep);
}

bool DataParallelRun::run(const TrainingCallbacks& cb) {
  const int batch = m_options.dp.trainer.batch;
  const int procs = m_trainer->processors();
  const bool checkpoints = !m_options.checkpoint_dir.empty();
  Batcher batches(m_train, batch, m_options.dp.trainer.seed, true);
  Batch b;
  for (; m_epoch < m_options.epochs; ++m_epoch) {
    const auto wall0 = std::chrono::steady_clock::now();
    if (m_step == 0) m_epoch_start = m_trainer->totals();
    batches.start_epoch(m_epoch);
    const int64_t total = m_options.steps_limit > 0
                              ? std::min(m_options.steps_limit, batches.batches_per_epoch())
                              : batches.batches_per_epoch();
    for (int64_t i = 0; i < m_step; ++i) batches.next(b);
    while (m_step < total && batches.next(b)) {
      ++m_step;
      if (b.size < procs) {
        m_skipped += b.size;
        continue;
      }
      if (m_single_core_s == 0) {
        const int shard = (batch + procs - 1) / procs;
        m_single_core_s =
            m_trainer->single_core_step_seconds(shard, b.images.data(), b.labels.data());
      }
      m_loss_sum += m_trainer->step(b.images.data(), b.labels.data(), b.size) * b.size;
      m_samples += b.size;
      if (cb.progress)
        cb.progress(m_epoch, m_step, total, m_loss_sum / static_cast<double>(m_samples));
      if (checkpoints && m_options.checkpoint_every > 0 &&
          m_trainer->steps() % m_options.checkpoint_every == 0)
        save(m_epoch);
      if (cb.keep_going && !cb.keep_going(m_trainer->steps())) return false;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    m_epochs.push_back(finish_epoch(wall));
    if (cb.epoch_done) cb.epoch_done(m_epochs.back());
    m_step = 0;
    m_loss_sum = 0;
    m_samples = 0;
    m_skipped = 0;
    if (checkpoints) {
      m_epoch_start = m_trainer->totals();
      save(m_epoch + 1);
    }
  }
  return true;
}

nlohmann::ordered_json DataParallelRun::finish_epoch(double wall_seconds) {
  const int batch = m_options.dp.trainer.batch;
  const int procs = m_trainer->processors();
  graph::EvalResult tr, te;
  Batch b;
  Batcher ev(m_train, batch, m_options.dp.trainer.seed, false);
  ev.start_epoch(0);
  while (tr.samples < m_test.count && ev.next(b))
    m_trainer->evaluate(b.images.data(), b.labels.data(), b.size, tr);
  Batcher test(m_test, batch, m_options.dp.trainer.seed, false);
  test.start_epoch(0);
  while (test.next(b)) m_trainer->evaluate(b.images.data(), b.labels.data(), b.size, te);

  const DataParallelTotals d = difference(m_trainer->totals(), m_epoch_start);
  const double chip_s = static_cast<double>(d.wall_ps) * 1e-12;
  const double compute_s = static_cast<double>(d.compute_ps) * 1e-12;
  const double exchange_s = static_cast<double>(d.exchange_ps) * 1e-12;
  double busy = 0, most = 0;
  for (int64_t l : d.link_busy_ps) {
    busy += static_cast<double>(l);
    most = std::max(most, static_cast<double>(l));
  }
  const double links = static_cast<double>(std::max<size_t>(1, d.link_busy_ps.size()));
  const double samples = static_cast<double>(d.samples);
  const int shard = (batch + procs - 1) / procs;
  nlohmann::ordered_json j;
  j["epoch"] = m_epoch + 1;
  j["steps"] = d.steps;
  j["samples"] = d.samples;
  j["skipped_samples"] = m_skipped;
  j["loss"] = ratio(m_loss_sum, samples);
  j["train_accuracy"] = ratio(static_cast<double>(tr.correct), static_cast<double>(tr.samples));
  j["train_accuracy_samples"] = tr.samples;
  j["test_accuracy"] = ratio(static_cast<double>(te.correct), static_cast<double>(te.samples));
  j["test_loss"] = ratio(te.loss_sum, static_cast<double>(te.samples));
  j["processors"] = procs;
  j["supersteps"] = d.supersteps;
  j["sim_chip_seconds"] = chip_s;
  j["sim_host_link_seconds"] = d.host_link_seconds;
  j["sim_seconds"] = chip_s + d.host_link_seconds;
  j["samples_per_sim_second"] = ratio(samples, chip_s + d.host_link_seconds);
  j["compute_seconds"] = compute_s;
  j["exchange_seconds"] = exchange_s;
  j["overlap_seconds"] = std::max(0.0, compute_s + exchange_s - chip_s);
  j["exchange_share"] = ratio(exchange_s, chip_s);
  j["exchange_bytes"] = d.exchange_bytes;
  j["wire_bytes"] = d.wire_bytes;
  j["packets"] = d.packets;
  j["retransmissions"] = d.retransmissions;
  j["link_utilization"] = ratio(busy, links * static_cast<double>(d.wall_ps));
  j["max_link_utilization"] = ratio(most, static_cast<double>(d.wall_ps));
  j["single_core_step_seconds"] = m_single_core_s;
  j["scaling_efficiency"] =
      ratio(ratio(samples, chip_s),
            static_cast<double>(procs) * ratio(static_cast<double>(shard), m_single_core_s));
  j["host_seconds"] = wall_seconds;
  return j;
}

nlohmann::ordered_json DataParallelRun::report() const {
  const DataParallelOptions& o = m_options.dp;
  const system::SystemSpec& s = o.system;
  nlohmann::ordered_json r;
  r["model"] = m_options.model_name;
  r["dataset"] = m_train.name;
  r["optimizer"] = o.trainer.optimizer.kind == graph::OptimizerKind::kAdam ? "adam" : "sgd";
  r["batch"] = o.trainer.batch;
  r["lr"] = o.trainer.optimizer.lr;
  r["seed"] = o.trainer.seed;
  r["config"] = m_options.config.spec.name;
  r["config_hash"] = m_options.config.hash;
  r["clock_hz"] = m_options.config.spec.clock_hz;
  r["processors"] = s.processors();
  r["chips"] = s.chips;
  r["cores_per_chip"] = s.cores_per_chip;
  r["rings"] = o.rings;
  r["directions"] = m_trainer->directions();
  r["allreduce"] = compiler::algorithm_name(o.allreduce);
  r["bucket_words"] = o.bucket_words;
  r["overlap"] = o.bucket_words > 0 && o.overlap;
  r["buckets"] = m_trainer->first_image().buckets;
  r["overlapped_supersteps_per_step"] = m_trainer->first_image().overlapped_supersteps;
  r["resumed_from"] = m_resumed_from;
  r["system"] = m_trainer->system_json();
  nlohmann::ordered_json resolved = m_options.config.resolved;
  resolved["system.chips"] = s.chips;
  resolved["system.chips_per_board"] = s.chips_per_board;
  resolved["system.boards"] = s.boards;
  resolved["system.cores_per_chip"] = s.cores_per_chip;
  resolved["system.topology"] = system::topology_name(s.topology);
  r["resolved_config"] = resolved;
  r["epochs"] = m_epochs;
  return r;
}

}  // namespace tessera::runtime
