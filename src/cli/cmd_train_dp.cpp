#include "cli/cmd_train_dp.h"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "cli/cli_output.h"
#include "common/error.h"
#include "runtime/data_parallel_run.h"
#include "system/collective_grid.h"
#include "system/communicator.h"
#include "system/machine_spec.h"

namespace tessera::cli {

namespace {

void print_epoch(const nlohmann::ordered_json& j) {
  std::printf(
      "epoch %d: loss %.4f  train acc %.2f%%  test acc %.2f%%  sim %.4f s (+ host link %.4f s)  "
      "%.0f samples/sim-s  "
      "host %.1f s\n",
      j["epoch"].get<int>(), j["loss"].get<double>(), 100 * j["train_accuracy"].get<double>(),
      100 * j["test_accuracy"].get<double>(), j["sim_chip_seconds"].get<double>(),
      j["sim_host_link_seconds"].get<double>(), j["samples_per_sim_second"].get<double>(),
      j["host_seconds"].get<double>());
  std::printf(
      "  data parallel on %d processors: compute %.4f s  exchange %.4f s (%.1f%% of the chip time) "
      " "
      "overlap %.4f s  links %.1f%% (busiest %.1f%%)  retransmissions %llu  scaling efficiency "
      "%.3f\n",
      j["processors"].get<int>(), j["compute_seconds"].get<double>(),
      j["exchange_seconds"].get<double>(), 100 * j["exchange_share"].get<double>(),
      j["overlap_seconds"].get<double>(), 100 * j["link_utilization"].get<double>(),
      100 * j["max_link_utilization"].get<double>(),
      static_cast<unsigned long long>(j["retransmissions"].get<uint64_t>()),
      j["scaling_efficiency"].get<double>());
  std::fflush(stdout);
}

}  // namespace

system::SystemSpec data_parallel_machine(const std::string& config_path, int chips,
                                         int cores_per_chip, int batch) {
  const system::SystemSpec s = runtime::data_parallel_system(
      system::load_machine_spec(config_path).system, chips, cores_per_chip);
  if (batch < s.processors())
    throw Error(
        "train",
        fmt::format("batch {} has fewer samples than the {} processors ({} chips x {} cores)",
                    batch, s.processors(), s.chips, s.cores_per_chip));
  return s;
}

void check_data_parallel_flags(bool chips, int64_t bucket_words, bool no_overlap) {
  if (!chips && (bucket_words != 0 || no_overlap))
    throw Error("train", "--bucket-words and --no-overlap need --chips");
  if (bucket_words < 0)
    throw Error("train", fmt::format("--bucket-words {}: must be >= 0", bucket_words));
  if (no_overlap && bucket_words == 0)
    throw Error("train", "--no-overlap needs --bucket-words (without buckets nothing overlaps)");
}

compiler::CollectiveAlgorithm allreduce_for(const std::string& name,
                                            const system::SystemSpec& machine) {
  if (name == "ring") return compiler::CollectiveAlgorithm::kRing;
  if (name == "torus") return compiler::CollectiveAlgorithm::kTorus;
  if (!name.empty() && name != "auto")
    throw Error("--allreduce", fmt::format("'{}': expected auto, ring or torus", name));
  int dimensions = 0;
  for (int d : system::collective_grid(machine)) dimensions += d > 1 ? 1 : 0;
  return dimensions >= 2 ? compiler::CollectiveAlgorithm::kTorus
                         : compiler::CollectiveAlgorithm::kRing;
}

void run_train_data_parallel(const runtime::Dataset& train, const runtime::Dataset& test,
                             const runtime::TrainingRunOptions& single,
                             const system::SystemSpec& machine, const std::string& report_path,
                             compiler::CollectiveAlgorithm allreduce,
                             const DataParallelFlags& flags) {
  runtime::DataParallelRunOptions o;
  o.model_name = single.model_name;
  o.model = single.model;
  o.config = single.config;
  o.dp.trainer = single.trainer;
  o.dp.system = machine;
  o.dp.allreduce = allreduce;
  o.dp.fabric_seed = single.trainer.seed;
  o.dp.bucket_words = flags.bucket_words;
  o.dp.overlap = flags.overlap;
  o.dp.comm = &system::world();  // under mpirun the processors are spread over the ranks
  o.epochs = single.epochs;
  o.steps_limit = single.steps_limit;
  o.checkpoint_dir = single.checkpoint_dir;
  o.checkpoint_every = single.checkpoint_every;
  o.checkpoint_keep = single.checkpoint_keep;
  o.resume = single.resume;
  runtime::DataParallelRun run(train, test, o);
  if (!run.resumed_from().empty() && system::world().rank() == 0)
    std::fprintf(stderr, "resumed from %s\n", run.resumed_from().c_str());
  runtime::TrainingCallbacks cb;
  cb.progress = [](int epoch, int64_t steps, int64_t total, double loss) {
    if (system::world().rank() == 0) print_training_progress(epoch, steps, total, loss);
  };
  cb.epoch_done = print_epoch;
  run.run(cb);
  if (!report_path.empty() && system::world().rank() == 0) write_json(report_path, run.report());
}

}  // namespace tessera::cli
