#include "runtime/data_parallel_run.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <exception>
#include <future>
#include <tuple>
#include <vector>

#include "common/error.h"

namespace tessera::runtime {

namespace {

// One training step's figures (data_parallel_run.h, "per_step"): its loss, and in simulated
// picoseconds the system's time, the busiest processor's compute, the barriers and exchange phases
// on the critical path, and of those the barriers alone.
struct StepFigures {
  double loss = 0;
  int64_t wall_ps = 0, compute_ps = 0, exchange_ps = 0, barrier_ps = 0, supersteps = 0;
};

// Calls f(name, field) for every integer field of `s` (one list for save, load and the report).
template <class S, class F>
void each_step_field(S& s, F&& f) {
  f("wall_ps", s.wall_ps);
  f("compute_ps", s.compute_ps);
  f("exchange_ps", s.exchange_ps);
  f("barrier_ps", s.barrier_ps);
  f("supersteps", s.supersteps);
}

nlohmann::ordered_json steps_to_json(const std::vector<StepFigures>& steps) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const StepFigures& s : steps) {
    nlohmann::ordered_json o{{"loss", s.loss}};
    each_step_field(s, [&](const char* name, int64_t v) { o[name] = v; });
    j.push_back(std::move(o));
  }
  return j;
}

std::vector<StepFigures> steps_from_json(const nlohmann::ordered_json& j, const std::string& path) {
  const char* corrupt = "corrupt checkpoint progress (per-step figures)";
  if (!j.is_array()) throw Error(path, corrupt);
  std::vector<StepFigures> out;
  for (const nlohmann::ordered_json& o : j) {
    if (!o.is_object() || !o.contains("loss") || !o["loss"].is_number()) throw Error(path, corrupt);
    StepFigures s;
    s.loss = o["loss"].get<double>();
    each_step_field(s, [&](const char* name, int64_t& v) {
      if (!o.contains(name) || !o[name].is_number_integer()) throw Error(path, corrupt);
      v = o[name].get<int64_t>();
    });
    out.push_back(s);
  }
  return out;
}

// The epoch report's "per_step": one array per figure, times in seconds.
nlohmann::ordered_json per_step_json(const std::vector<StepFigures>& steps) {
  nlohmann::ordered_json loss = nlohmann::ordered_json::array(), supersteps = loss;
  std::vector<double> seconds, compute, exchange, barrier, overlap;
  auto s_of = [](int64_t ps) { return static_cast<double>(ps) * 1e-12; };
  for (const StepFigures& s : steps) {
    loss.push_back(s.loss);
    seconds.push_back(s_of(s.wall_ps));
    compute.push_back(s_of(s.compute_ps));
    exchange.push_back(s_of(s.exchange_ps));
    barrier.push_back(s_of(s.barrier_ps));
    overlap.push_back(std::max(0.0, s_of(s.compute_ps) + s_of(s.exchange_ps) - s_of(s.wall_ps)));
    supersteps.push_back(s.supersteps);
  }
  return {{"loss", loss},
          {"seconds", seconds},
          {"compute_seconds", compute},
          {"exchange_seconds", exchange},
          {"barrier_seconds", barrier},
          {"overlap_seconds", overlap},
          {"supersteps", supersteps}};
}

// The data-parallel Trainer: a DataParallelTrainer, the scaling baseline and the epoch's figures
// (data_parallel_run.h).
class DataParallelRunTrainer final : public Trainer {
 public:
  explicit DataParallelRunTrainer(const DataParallelRunOptions& options)
      : m_options(options.dp),
        m_context(options.model.context()),
        m_mxu_count(options.config.spec.mxu_count),
        m_dp(options.model, options.config.spec, options.dp),
        m_epoch_start(m_dp.totals()) {}

  const DataParallelTrainer& dp() const { return m_dp; }

  const ChipTrainerOptions& options() const override { return m_options.trainer; }
  int64_t steps() const override { return m_dp.steps(); }

  std::optional<double> step(const Batch& b) override {
    const int procs = m_dp.processors();
    if (b.size < procs) {
      m_skipped += b.size;
      return std::nullopt;
    }
    if (m_single_core_s == 0) {
      const int shard = (m_options.trainer.batch + procs - 1) / procs;
      const ChipTrainer& one = m_dp.single_core();
      const PeWork pe_before = one.pe_attribution().work();
      const int64_t busy_before = one.core().unit_busy_cycles(isa::Unit::Mxu);
      const int64_t cycles_before = one.core().cycles();
      m_single_core_s = b.ids.empty()
                            ? m_dp.single_core_step_seconds(shard, b.images.data(), b.labels.data())
                            : m_dp.single_core_step_seconds(shard, b.ids.data(), b.labels.data());
      m_single_core_pe.add_step(one.pe_attribution(), one.pe_attribution().work() - pe_before);
      m_single_core_mxu_busy = one.core().unit_busy_cycles(isa::Unit::Mxu) - busy_before;
      m_single_core_cycles = one.core().cycles() - cycles_before;
    }
    const DataParallelTotals before = m_dp.totals();
    const int64_t barrier_before = m_dp.system().groups().front().barrier_ps;
    StepFigures f;
    f.loss = step_on(m_dp, b);
    const DataParallelTotals d = totals_since(m_dp.totals(), before);
    f.wall_ps = d.wall_ps;
    f.compute_ps = d.compute_ps;
    f.exchange_ps = d.exchange_ps;
    f.barrier_ps = m_dp.system().groups().front().barrier_ps - barrier_before;
    f.supersteps = d.supersteps;
    m_step_figures.push_back(f);
    return f.loss;
  }

  void evaluate(const Batch& b, graph::EvalResult& acc) override {
    m_dp.evaluate(std::span<const Batch>(&b, 1), acc);
  }
  void evaluate_batches(std::span<const Batch> batches, graph::EvalResult& acc) override {
    m_dp.evaluate(batches, acc);
  }

  Tensors parameters() const override { return m_dp.params(0); }

  void start_epoch() override {
    m_epoch_start = m_dp.totals();
    m_skipped = 0;
    m_step_figures.clear();
  }

  nlohmann::ordered_json epoch_report(const EpochResult& e) override;
  nlohmann::ordered_json identity(const nlohmann::ordered_json& common) const override;

  nlohmann::ordered_json identity_defaults() const override {
    return {{"allreduce", compiler::algorithm_name(compiler::CollectiveAlgorithm::kRing)}};
  }

  void save(Checkpoint& c) const override {
    std::tie(c.params, c.state) = m_dp.replica_state();  // collective
    c.progress["skipped"] = m_skipped;
    c.progress["single_core_bits"] = std::bit_cast<uint64_t>(m_single_core_s);
    c.progress["single_core_mxu"] = {{"pe", m_single_core_pe.to_json()},
                                     {"mxu_busy", m_single_core_mxu_busy},
                                     {"cycles", m_single_core_cycles}};
    c.progress["epoch_start"] = totals_to_json(m_epoch_start);
    c.progress["per_step"] = steps_to_json(m_step_figures);
    c.progress["trainer"] = m_dp.save_state();  // collective
  }

  void restore(const Checkpoint& c, int64_t step, const std::string& path) override;
  bool writes_files() const override { return m_dp.system().communicator().rank() == 0; }
  void report_machine(nlohmann::ordered_json& r) const override;
  void report_statistics(nlohmann::ordered_json& r) const override {
    r["system"] = m_dp.system_json();
  }

 private:
  DataParallelOptions m_options;
  int m_context;  // text models: bytes per window (tokens per sample); 0 for image models
  int m_mxu_count;
  DataParallelTrainer m_dp;
  double m_single_core_s = 0;
  // The baseline step's MXU work per layer, MXU busy cycles and cycles (the report's mxu_split).
  PeTally m_single_core_pe;
  int64_t m_single_core_mxu_busy = 0, m_single_core_cycles = 0;
  // The epoch in progress.
  DataParallelTotals m_epoch_start;
  int64_t m_skipped = 0;
  // Its steps so far (empty after resuming from a checkpoint that does not keep them: the epoch's
  // report then has no per_step).
  std::vector<StepFigures> m_step_figures;
};

nlohmann::ordered_json DataParallelRunTrainer::identity(
    const nlohmann::ordered_json& common) const {
  const DataParallelOptions& o = m_options;
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
  id["directions"] = m_dp.directions();
  id["allreduce"] = compiler::algorithm_name(o.allreduce);
  id["fabric_seed"] = o.fabric_seed;
  if (o.bucket_words > 0) {  // another bucketing reduces in another order
    id["bucket_words"] = o.bucket_words;
    id["overlap"] = o.overlap;
  }
  for (const auto& [key, value] : common.items()) id[key] = value;
  id["adam_on"] = o.trainer.adam_on == compiler::AdamOn::kUnit ? "unit" : "vector-unit";
  return id;
}

void DataParallelRunTrainer::restore(const Checkpoint& c, int64_t /*step*/,
                                     const std::string& path) {
  const nlohmann::ordered_json& p = c.progress;
  try {
    m_skipped = p.at("skipped").get<int64_t>();
    m_single_core_s = std::bit_cast<double>(p.at("single_core_bits").get<uint64_t>());
    m_single_core_pe = PeTally{};
    m_single_core_mxu_busy = m_single_core_cycles = 0;
    if (p.contains("single_core_mxu")) {  // absent in checkpoints written before it was kept
      const nlohmann::ordered_json& m = p["single_core_mxu"];
      m_single_core_pe = PeTally::from_json(m.at("pe"), path);
      m_single_core_mxu_busy = m.at("mxu_busy").get<int64_t>();
      m_single_core_cycles = m.at("cycles").get<int64_t>();
    }
  } catch (const nlohmann::json::exception&) {
    throw Error(path, "corrupt checkpoint progress (position)");
  }
  if (!p.contains("epoch_start") || !p.contains("trainer"))
    throw Error(path, "corrupt checkpoint progress (inconsistent position)");
  m_epoch_start = totals_from_json(p["epoch_start"], path);
  m_dp.restore(c.params, c.state, p["trainer"], path);
  m_step_figures.clear();
  if (p.contains("per_step")) {
    m_step_figures = steps_from_json(p["per_step"], path);
    if (static_cast<int64_t>(m_step_figures.size()) !=
        totals_since(m_dp.totals(), m_epoch_start).steps)
      throw Error(path, "corrupt checkpoint progress (per-step figures)");
  }
}

nlohmann::ordered_json DataParallelRunTrainer::epoch_report(const EpochResult& e) {
  const int batch = m_options.trainer.batch;
  const int procs = m_dp.processors();
  const DataParallelTotals d = totals_since(m_dp.totals(), m_epoch_start);
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
  j["epoch"] = e.epoch + 1;
  j["steps"] = d.steps;
  j["samples"] = d.samples;
  j["skipped_samples"] = m_skipped;
  put_quality(j, e);
  j["processors"] = procs;
  j["supersteps"] = d.supersteps;
  j["sim_chip_seconds"] = chip_s;
  j["sim_host_link_seconds"] = d.host_link_seconds;
  j["sim_seconds"] = chip_s + d.host_link_seconds;
  j["samples_per_sim_second"] = ratio(samples, chip_s + d.host_link_seconds);
  if (m_context > 0)
    j["tokens_per_sim_second"] = ratio(samples * m_context, chip_s + d.host_link_seconds);
  if (const nlohmann::ordered_json split = mxu_split_json(m_single_core_pe, m_single_core_mxu_busy,
                                                          m_single_core_cycles, m_mxu_count);
      !split.is_null())
    j["mxu_split"] = split;
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
  j["host_seconds"] = e.wall_seconds;
  if (static_cast<int64_t>(m_step_figures.size()) == d.steps)
    j["per_step"] = per_step_json(m_step_figures);
  return j;
}

void DataParallelRunTrainer::report_machine(nlohmann::ordered_json& r) const {
  const DataParallelOptions& o = m_options;
  const system::SystemSpec& s = o.system;
  r["processors"] = s.processors();
  r["chips"] = s.chips;
  r["cores_per_chip"] = s.cores_per_chip;
  r["rings"] = o.rings;
  r["directions"] = m_dp.directions();
  r["allreduce"] = compiler::algorithm_name(o.allreduce);
  r["bucket_words"] = o.bucket_words;
  r["overlap"] = o.bucket_words > 0 && o.overlap;
  r["buckets"] = m_dp.first_image().buckets;
  r["overlapped_supersteps_per_step"] = m_dp.first_image().overlapped_supersteps;
}

// The loop's options, with the report's resolved config showing the system as run.
RunOptions with_system_as_run(const DataParallelRunOptions& options) {
  RunOptions o = options;
  const system::SystemSpec& s = options.dp.system;
  o.config.resolved["system.chips"] = s.chips;
  o.config.resolved["system.chips_per_board"] = s.chips_per_board;
  o.config.resolved["system.boards"] = s.boards;
  o.config.resolved["system.cores_per_chip"] = s.cores_per_chip;
  o.config.resolved["system.topology"] = system::topology_name(s.topology);
  return o;
}

}  // namespace

DataParallelRun::DataParallelRun(const Dataset& train, const Dataset& test,
                                 const DataParallelRunOptions& options)
    : RunLoop(train, test, with_system_as_run(options),
              [&options] { return std::make_unique<DataParallelRunTrainer>(options); }) {}

struct DataParallelRun::Built {
  std::unique_ptr<Trainer> trainer;
  std::exception_ptr error;  // the build's: RunLoop's constructor rethrows it after its checks
  double seconds = 0;
};

DataParallelRun::DataParallelRun(const Dataset& train, const Dataset& test,
                                 const DataParallelRunOptions& options, Built& built)
    : RunLoop(train, test, with_system_as_run(options), [&built]() -> std::unique_ptr<Trainer> {
        if (built.error) std::rethrow_exception(built.error);
        return std::move(built.trainer);
      }) {
  add_build_seconds(built.seconds);
}

std::unique_ptr<DataParallelRun> DataParallelRun::load_and_build(
    const std::function<void()>& load, const Dataset& train, const Dataset& test,
    const DataParallelRunOptions& options) {
  if (options.dp.threads < 2) {
    load();
    return std::make_unique<DataParallelRun>(train, test, options);
  }
  std::future<void> loading = std::async(std::launch::async, load);
  Built built;
  const auto start = std::chrono::steady_clock::now();
  try {
    built.trainer = std::make_unique<DataParallelRunTrainer>(options);
  } catch (...) {
    built.error = std::current_exception();
  }
  built.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  loading.get();
  return std::unique_ptr<DataParallelRun>(new DataParallelRun(train, test, options, built));
}

const DataParallelTrainer& DataParallelRun::trainer() const {
  return static_cast<const DataParallelRunTrainer&>(RunLoop::trainer()).dp();
}

}  // namespace tessera::runtime
