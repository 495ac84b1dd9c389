// DataParallelTrainer: data-parallel training on the timed multi-processor system.
//
// P = chips x cores_per_chip processors (system::System: timed cores, packet fabric, BSP
// supersteps) each keep a full replica of the parameters and optimizer state in their own HBM.
// The model is a layer-list model on images or the gpt decoder on byte windows (train_model.h); a
// sample is an image with one label, or a window's byte ids with one label per position (the next
// byte).
// A step on a global batch of n samples: processor p trains on samples [p*q + min(p, r), ...) of
// it (q = n / P, r = n % P, the first r processors one sample more); the host writes each shard
// (its samples' inputs and labels, and Adam's per-step scalars) into that processor's HBM; every
// processor then runs the data-parallel image (compiler/data_parallel.h: forward and backward on
// its shard, the gradient all-reduce weighted by shard / n, the optimizer update) with its index
// patched in. Every replica thus applies the same reduced gradient and holds bit-identical weights
// afterwards; with check_replicas (the default in debug builds) every step compares every
// processor's parameters with processor 0's bit for bit and throws Error on a difference. A global
// batch with fewer samples than processors is refused (Error); the training loop
// (data_parallel_run.h) skips such a last batch of an epoch.
// The step's loss is sum_p shard_p * loss_p / n (in double), loss_p the mean over processor p's
// shard as computed on the chip (for gpt the mean over its windows' positions, so the step's loss
// is the mean over every position of the global batch).
// A model with state (batch normalisation's running averages: TrainModel::initial_state) trains as
// PyTorch's DistributedDataParallel trains it without SyncBatchNorm: each replica normalises with
// its own shard's batch statistics. Each then updates its running averages from them, and the
// image all-reduces those with the gradients, weighted by shard / n like them (compiler/
// data_parallel.h), so every replica holds the same: the running mean as the global batch's mean
// would have moved it, the running variance the shard-weighted mean of the shards' updates.
// Evaluation runs the compiled inference program on separate cores loaded with processor 0's
// parameters and model state (chip_inference.h InferenceCore), so it does not disturb the system's
// clocks: the batches are split over the ranks and each rank's over its host threads (one core per
// thread), and the scores are added in batch order, so the result is the same for any ranks and
// threads and the same as one core evaluating batch after batch (ChipTrainer::evaluate). Time: the
// system's clock (the latest core) per step; the host link writes every chip's shards in parallel
// (each chip has its own link), charged as the largest per-chip byte count / host_bytes_per_second,
// outside the chip time (as ChipTrainer does).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/compiler.h"
#include "compiler/data_parallel.h"
#include "runtime/chip_inference.h"
#include "runtime/dataset.h"
#include "runtime/replica_state.h"
#include "runtime/train_chip.h"
#include "runtime/train_model.h"
#include "system/system.h"

namespace tessera::runtime {

struct DataParallelOptions {
  ChipTrainerOptions trainer;  // trainer.batch: the global batch
  system::SystemSpec system;
  int rings = 1;
  int directions = 0;  // 0: 2 on full-duplex links, else 1
  // The gradient all-reduce: ring, or torus over system::collective_grid(system).
  compiler::CollectiveAlgorithm allreduce = compiler::CollectiveAlgorithm::kRing;
  uint64_t fabric_seed = 0;  // the fabric's loss streams
  // The gradient all-reduce (compiler/data_parallel.h): 0 = after the backward pass in chunks of
  // all of vector memory; > 0 = buckets of at most this many words (the step compiled for
  // compiler::bucket_step_spec), their supersteps between the backward kernels when `overlap`, else
  // all after the backward pass (the same values bit for bit, only time differs).
  int64_t bucket_words = 0;
  bool overlap = true;
  // The ranks to spread the processors over (system/system.h "Distribution"; &system::world()
  // under mpirun); nullptr: this process alone. With several ranks step(), evaluate(), params(),
  // diverged_replicas() and single_core_step_seconds() are collective (every rank calls them).
  system::Communicator* comm = nullptr;
  // Host threads of this rank (system::SystemOptions::threads): the processors' compute phases,
  // writing their shards and loading their programs before each step, and evaluation. Results do
  // not depend on it.
  int threads = 1;
#ifdef NDEBUG
  bool check_replicas = false;
#else
  bool check_replicas = true;
#endif
};

// Cumulative figures of the training steps (evaluation excluded).
struct DataParallelTotals {
  int64_t steps = 0, samples = 0, supersteps = 0;
  int64_t wall_ps = 0;      // system time of the steps: the latest core's clock, summed per step
  int64_t compute_ps = 0;   // per step, the busiest processor's time not waiting for an exchange
  int64_t exchange_ps = 0;  // per step, barriers + exchange phases on the critical path (system.h)
  std::vector<int64_t> link_busy_ps;  // per link direction (fabric::Routing's link order)
  uint64_t exchange_bytes = 0, wire_bytes = 0, packets = 0, retransmissions = 0;
  int64_t host_bytes = 0;        // into all chips
  double host_link_seconds = 0;  // per step, the largest chip's bytes / host link bandwidth
};

// The totals as JSON (integers; host_link_seconds as its IEEE-754 bits) and back (errors name
// `where`).
nlohmann::ordered_json totals_to_json(const DataParallelTotals& t);
DataParallelTotals totals_from_json(const nlohmann::ordered_json& j, const std::string& where);
// The figures since `start` (an earlier state of the same totals): `now` minus `start`, field by
// field (link directions `start` does not have yet count from 0).
DataParallelTotals totals_since(const DataParallelTotals& now, const DataParallelTotals& start);

class DataParallelTrainer {
 public:
  DataParallelTrainer(const TrainModel& model, const core::CoreSpec& spec,
                      const DataParallelOptions& options);
  ~DataParallelTrainer();

  // One step on a global batch of n samples (n >= processors: images, or the byte ids of n
  // windows); returns the loss before the update.
  double step(const float* images, const int32_t* labels, int n);
  double step(const int32_t* ids, const int32_t* labels, int n);
  // Inference of every batch on processor 0's parameters (see above); adds to `acc` what
  // ChipTrainer::evaluate would, batch after batch.
  void evaluate(std::span<const Batch> batches, graph::EvalResult& acc);

  int processors() const { return m_system->processors(); }
  int directions() const { return m_directions; }
  // The image of the first processor's shard (buckets, overlapped supersteps per step).
  const compiler::DataParallelImage& first_image() const { return *m_images.begin()->second; }
  // Processor p's parameters as they are in its HBM (aligned with graph::Model::params).
  std::vector<std::vector<float>> params(int p) const;
  // The model's state (batch normalisation's running averages; see above), as processor 0 holds
  // it (every replica holds the same).
  Tensors model_state() const;
  // Processors whose parameter words differ from processor 0's (empty when all are identical).
  std::vector<int> diverged_replicas() const;
  const system::System& system() const { return *m_system; }
  const DataParallelTotals& totals() const { return m_totals; }
  int64_t steps() const { return m_steps; }
  // Chip seconds of one training step of `shard` samples on one core alone (a ChipTrainer step
  // of the same model and optimizer on the same core config): the scaling-efficiency baseline.
  double single_core_step_seconds(int shard, const float* images, const int32_t* labels);
  double single_core_step_seconds(int shard, const int32_t* ids, const int32_t* labels);
  // The core that runs those single-core steps (its MXU work per layer is attributed for training
  // steps only: ChipTrainer::pe_attribution); it also compiles the inference programs.
  const ChipTrainer& single_core() const { return *m_eval; }
  // The fabric statistics of the system so far (links, chips), system::System::stats_json.
  nlohmann::ordered_json system_json() const { return m_system->stats_json(); }

  // Checkpoints (data_parallel_run.h; data_parallel_state.cpp), between steps; collective.
  // replica_state(): processor 0's parameters, and its optimizer state followed by its model state
  // (replica_state.h split_checkpoint_state), after checking that every processor's are
  // bit-identical to them (Error naming the first that differs): the run guarantees identical
  // replicas, so one replica plus that check stands for all.
  std::pair<Tensors, Tensors> replica_state() const;
  // Everything else later steps and the figures depend on: the step counter (Adam's t), the
  // cumulative totals, the single-core baselines, and the system (System::save_state: its clocks,
  // per-group timing, every core's clock, the fabric's loss streams, wires and statistics).
  nlohmann::ordered_json save_state() const;
  // Into a trainer just built with the same model, options and system: every processor gets the
  // parameters, the optimizer state and the model state, its Adam unit the step counter, then the
  // state above. Errors
  // name `where` (a state of another shape, or tensors that do not fit the compiled step).
  void restore(const Tensors& params, const Tensors& state, const nlohmann::ordered_json& saved,
               const std::string& where);

 private:
  const compiler::CompiledProgram& program(int shard);
  const compiler::DataParallelImage& image(int shard, int n);
  // The image's code decoded for the cores, once: every processor loads it with its own index.
  std::shared_ptr<const core::DecodedProgram> decoded(const compiler::DataParallelImage& image);
  // `x`: n samples of m_sample 32-bit values (floats or int32 ids), m_labels labels each.
  double train(const void* x, const int32_t* labels, int n);
  void write_shard(int p, const compiler::CompiledProgram& prog, const void* x,
                   const int32_t* labels, int first, int count);
  template <class X>
  double single_core(int shard, const X* x, const int32_t* labels);
  void check_replicas() const;
  // Processors whose words(core) differ from processor 0's (collective; ascending).
  std::vector<int> diverged(
      const std::function<std::vector<uint32_t>(const core::Core&)>& words) const;
  // The compiled step whose parameter and optimizer-state layout every shard's step shares.
  const compiler::CompiledProgram& layout() const;

  TrainModel m_model;
  core::CoreSpec m_spec;
  DataParallelOptions m_options;
  int m_directions = 1;
  int64_t m_sample = 0;  // input values per sample
  int64_t m_labels = 0;  // label values per sample
  int64_t m_steps = 0;
  std::map<int, std::unique_ptr<compiler::CompiledProgram>> m_programs;  // per shard size
  std::map<std::pair<int, int>, std::unique_ptr<compiler::DataParallelImage>>
      m_images;  // (shard, n)
  std::map<const compiler::DataParallelImage*, std::shared_ptr<const core::DecodedProgram>>
      m_decoded;
  std::unique_ptr<system::System> m_system;
  std::unique_ptr<ChipTrainer> m_eval;
  std::vector<std::unique_ptr<InferenceCore>> m_eval_cores;  // one per host thread, when needed
  std::map<int, double> m_single_core;                       // shard -> seconds
  DataParallelTotals m_totals;
};

}  // namespace tessera::runtime
