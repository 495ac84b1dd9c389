#include "cli/train_dlrm.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/cli_output.h"
#include "common/error.h"
#include "core/sparse_core.h"
#include "report/format.h"
#include "runtime/data_parallel_machine.h"
#include "runtime/dlrm_train.h"
#include "runtime/run_config.h"
#include "system/communicator.h"

namespace tessera::cli {

namespace {

runtime::DlrmRecipe recipe_of(const DlrmFlags& d, const DlrmRunFlags& f) {
  runtime::DlrmRecipe r;
  r.model.tables = r.data.tables = d.tables;
  r.model.rows = r.data.rows = d.rows;
  r.model.dim = d.dim;
  r.data.bag = d.bag;
  r.data.zipf = d.zipf;
  r.test = d.test;
  r.batch = f.batch.value_or(r.batch);
  r.lr = f.lr.value_or(r.lr);
  r.steps = f.steps.value_or(r.steps);
  r.seed = r.data.seed = f.seed;
  if (!(d.zipf > 0)) throw UsageError("--zipf", fmt::format("{}: must be positive", d.zipf));
  runtime::dlrm_recipe_check(r);
  return r;
}

nlohmann::ordered_json figures_json(const runtime::DlrmShardFigures& f,
                                    const core::SparseCoreStats& s, int processors,
                                    double clock_hz) {
  const auto per_step = [&](double v) {
    return f.steps > 0 ? v / static_cast<double>(f.steps) : 0;
  };
  return {{"steps", f.steps},
          {"cycles", f.cycles},
          {"cycles_per_step", per_step(static_cast<double>(f.cycles))},
          {"sim_seconds", static_cast<double>(f.cycles) / clock_hz},
          {"lookup_cycles", f.lookup_cycles},
          {"tensor_core_cycles", f.tensor_cycles},
          {"backward_cycles", f.backward_cycles},
          {"dense_allreduce_cycles", f.allreduce_cycles},
          {"sparse_core",
           {{"busy_cycles", s.busy_cycles},
            {"busy_cycles_per_processor_step",
             per_step(static_cast<double>(s.busy_cycles)) / processors},
            {"descriptors", s.descriptors},
            {"ids", s.ids},
            {"unique_ids", s.unique_ids},
            {"hbm_row_reads", s.row_reads},
            {"hbm_row_writes", s.row_writes},
            {"hbm_read_bytes", s.hbm_read_bytes},
            {"hbm_write_bytes", s.hbm_write_bytes}}},
          {"rows_updated", f.rows_updated},
          {"exchange",
           {{"id_bytes", f.id_bytes},
            {"row_bytes", f.row_bytes},
            {"grad_bytes", f.grad_bytes},
            {"dense_bytes", f.dense_bytes},
            {"total_bytes", f.id_bytes + f.row_bytes + f.grad_bytes + f.dense_bytes},
            {"busiest_link_bytes", f.busiest_link_bytes},
            {"packets", f.packets}}}};
}

}  // namespace

void add_dlrm_flags(CLI::App& cmd, DlrmFlags& f) {
  cmd.add_option("--tables", f.tables, "dlrm: embedding tables (default 8)");
  cmd.add_option("--rows", f.rows, "dlrm: rows per table (default 262144)");
  cmd.add_option("--dim", f.dim, "dlrm: embedding width (default 16)");
  cmd.add_option("--bag", f.bag, "dlrm: ids per bag (default 4)");
  cmd.add_option("--zipf", f.zipf, "dlrm: the ids' Zipf exponent (default 1.05)");
  cmd.add_option("--test", f.test, "dlrm: test samples (default 32768)");
  cmd.add_option("--placement", f.placement, "dlrm: the tables over the processors, mod or table");
  cmd.add_option("--dense-on", f.dense_on,
                 "dlrm: where each processor's dense forward and backward run: tensor-core "
                 "(compiled and timed, the default) or host (fp32, untimed: a quicker look at the "
                 "tables' sharding)");
}

void run_train_dlrm(const DlrmFlags& d, const DlrmRunFlags& f) {
  if (f.executor != "chip" && f.executor != "host-f32")
    throw UsageError("--executor", "'" + f.executor + "': expected chip or host-f32");
  const bool chip = f.executor == "chip";
  if (chip && f.chips < 1)
    throw UsageError("--chips",
                     "--model dlrm on the chip needs --chips N (its tables are sharded)");
  if (!chip && f.chips >= 0)
    throw UsageError("--executor", "host-f32 runs on the host: not with --chips");
  runtime::DlrmDenseOn dense_on = runtime::DlrmDenseOn::kTensorCore;
  if (d.dense_on) {
    if (!chip) throw UsageError("--dense-on", "host-f32 runs everything on the host");
    if (*d.dense_on == "host")
      dense_on = runtime::DlrmDenseOn::kHost;
    else if (*d.dense_on != "tensor-core")
      throw UsageError("--dense-on", "unknown '" + *d.dense_on + "' (known: tensor-core, host)");
  }
  const runtime::DlrmRecipe r = recipe_of(d, f);
  const system::ShardPlacement placement =
      system::shard_placement_from_name(d.placement, "--placement");
  std::optional<runtime::RunConfig> config;
  system::SystemSpec machine;
  if (chip) {
    config = runtime::load_run_config(f.config, f.overrides);
    machine = runtime::data_parallel_machine(config->system, f.chips, f.cores_per_chip, r.batch);
  }
  // Under mpirun rank 0 alone writes the report (an error opening it aborts every rank).
  std::optional<OutputFile> report;
  if (!f.report.empty() && system::world().rank() == 0) report.emplace(f.report, "report");
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<runtime::DlrmTrainer> trainer;
  runtime::DlrmShardedTrainer* sharded = nullptr;
  std::unique_ptr<ThreadPool> pool;
  if (chip) {
    pool = std::make_unique<ThreadPool>(f.threads);
    try {
      auto t = std::make_unique<runtime::DlrmShardedTrainer>(
          r, config->spec, machine, placement, pool.get(), &system::world(), dense_on);
      sharded = t.get();
      trainer = std::move(t);
    } catch (const Error& e) {
      if (dynamic_cast<const UsageError*>(&e) != nullptr) throw;
      throw UsageError("--config", std::string("the DLRM tables do not fit: ") + e.what());
    }
  } else {
    trainer = std::make_unique<runtime::DlrmHostTrainer>(r);
  }
  const int64_t table_bytes = int64_t{4} * r.model.tables * r.model.rows * r.model.dim;
  std::printf(
      "dlrm: %d tables of %lld x %d (%.1f MiB), bag %d, zipf %.2f, batch %d, %lld steps, %s\n",
      r.model.tables, static_cast<long long>(r.model.rows), r.model.dim,
      static_cast<double>(table_bytes) / (1 << 20), r.data.bag, r.data.zipf, r.batch,
      static_cast<long long>(r.steps),
      chip ? fmt::format("{} processors ({} placement)", machine.processors(), d.placement).c_str()
           : "host reference");
  std::fflush(stdout);
  const int64_t every = std::max<int64_t>(1, r.steps / 10);
  const std::vector<double> losses = runtime::train_dlrm(r, *trainer, [&](int64_t s, double loss) {
    if ((s + 1) % every == 0 || s + 1 == r.steps) {
      std::printf("step %lld: loss %.4f\n", static_cast<long long>(s + 1), loss);
      std::fflush(stdout);
    }
  });
  nlohmann::ordered_json chip_json;
  int64_t hbm_pages = 0;
  std::optional<double> energy_j;
  if (sharded) {
    chip_json = figures_json(sharded->figures(), sharded->tables().sparse_stats(),
                             sharded->processors(), config->spec.clock_hz);
    hbm_pages = sharded->tables().hbm_pages();
    // Energy: the sparse cores' (core::sparse_core_energy of their counters, evaluation lookups
    // included) and, when they ran the dense part, the tensor cores' over the training steps.
    const core::CoreSpec& spec = config->spec;
    const double sparse_j = core::sparse_core_energy(spec.sparse, sharded->tables().sparse_stats(),
                                                     spec.energy.hbm_byte_pj)
                                .total *
                            1e-12;
    chip_json["energy"] = {{"sparse_cores_j", sparse_j}};
    if (dense_on == runtime::DlrmDenseOn::kTensorCore) {
      const double tensor_j = sharded->tensor_core_energy_pj() * 1e-12;
      chip_json["energy"]["tensor_cores_j"] = tensor_j;
      energy_j = sparse_j + tensor_j;
    }
  }
  const runtime::DlrmEval e = runtime::evaluate_dlrm(r, *trainer);
  const std::chrono::duration<double> host = std::chrono::steady_clock::now() - start;
  std::printf("test: log loss %.4f  AUC %.4f  (teacher AUC %.4f)  host %.1f s\n", e.log_loss, e.auc,
              e.teacher_auc, host.count());
  if (sharded) {
    const runtime::DlrmShardFigures& fig = sharded->figures();
    std::printf(
        "chip: %.0f cycles per step (lookup %.0f, tensor cores %.0f, backward %.0f, dense "
        "all-reduce %.0f); exchange %.1f MiB per step\n",
        static_cast<double>(fig.cycles) / fig.steps,
        static_cast<double>(fig.lookup_cycles) / fig.steps,
        static_cast<double>(fig.tensor_cycles) / fig.steps,
        static_cast<double>(fig.backward_cycles) / fig.steps,
        static_cast<double>(fig.allreduce_cycles) / fig.steps,
        static_cast<double>(fig.id_bytes + fig.row_bytes + fig.grad_bytes + fig.dense_bytes) /
            fig.steps / (1 << 20));
  }
  if (!report) return;
  nlohmann::ordered_json j;
  j["model"] = "dlrm";
  j["executor"] = f.executor;
  j["recipe"] = {{"tables", r.model.tables},
                 {"rows", r.model.rows},
                 {"dim", r.model.dim},
                 {"dense", r.model.dense},
                 {"bottom", r.model.bottom},
                 {"top", r.model.top},
                 {"bag", r.data.bag},
                 {"zipf", r.data.zipf},
                 {"batch", r.batch},
                 {"steps", r.steps},
                 {"test", r.test},
                 {"optimizer", "adagrad"},
                 {"lr", r.lr},
                 {"eps", r.eps},
                 {"seed", r.seed}};
  j["table_bytes"] = table_bytes;
  j["losses"] = losses;
  j["test_log_loss"] = e.log_loss;
  j["test_auc"] = e.auc;
  j["teacher_auc"] = e.teacher_auc;
  if (sharded) {
    j["config"] = f.config.empty() ? "built-in defaults" : f.config;
    j["config_hash"] = config->hash;
    j["chips"] = machine.chips;
    j["processors"] = machine.processors();
    j["placement"] = d.placement;
    const int64_t chip_hbm = config->spec.hbm_bytes * machine.cores_per_chip;
    j["chip_hbm_bytes"] = chip_hbm;
    j["tables_exceed_one_chip_hbm"] = table_bytes > chip_hbm;
    j["host_hbm_pages"] = hbm_pages;
    if (energy_j) j["energy_j"] = *energy_j;
    j["chip"] = chip_json;
    j["host_seconds"] = host.count();
  }
  write_json(*report, report::tagged("train", j));
}

}  // namespace tessera::cli
