// Training the DLRM-style model (graph/dlrm_model.h) on the generated clicks (runtime/dlrm_data.h)
// (docs/sparse-core.md, "DLRM"): the host fp32 reference, and the sharded trainer whose tables
// live on the sparse cores of a system's processors (system/sparse_shard_tables.h).
//
// A step on a global batch of n samples (step s: samples [s n, (s + 1) n)): forward, mean BCE
// loss, backward with dloss/dlogit = (sigmoid - y) / n, then Adagrad (numerics::adagrad_update,
// PyTorch's semantics; lr for every parameter, no decay) on the dense parameters and, row-wise on
// the rows the batch touched, on the tables (each table's step count advancing every step).
// Evaluation: the test samples [2^40, 2^40 + test), scored in batches of n: log loss and AUC
// (runtime/binary_metrics.h).
//
// The dense part is the graph of graph::build_dlrm (on the host: runtime/dlrm_dense_step.h, the
// executor in fp32 with autodiff's gradients); the dense Adagrad is graph::Optimizer's.
// Host reference: the whole batch at once, a table row's gradient summed over the batch's id
// positions in order; the tables are kept as the rows touched so far.
// Sharded: processor p of P takes samples [p q + min(p, r), ...) of the batch (q = n / P,
// r = n % P); its bags (sum) are looked up over the fabric, its dense forward and backward run on
// its tensor core (runtime/dlrm_chip_dense.h: the compiled step, chip numerics, timed) or, with
// DlrmDenseOn::kHost, on the host in fp32 (untimed), either way with the gradients of its share
// of the batch mean; its bags' gradients go back to the tables' owners (the row updates on the
// sparse cores), and the dense gradients are all-reduced over the same fabric
// (ShardedTables::all_reduce) before every replica applies the same update (on the host). Time
// per step, one phase after another from the previous step's end: the lookup, the tensor cores'
// step (the slowest processor's), the sparse backward and the all-reduce. Evaluation (predict)
// scores with the dense part on the host in fp32.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_pool.h"
#include "core/spec.h"
#include "graph/dlrm_model.h"
#include "graph/optimizer.h"
#include "runtime/dlrm_chip_dense.h"
#include "runtime/dlrm_data.h"
#include "runtime/dlrm_dense_step.h"
#include "system/sparse_shard.h"
#include "system/sparse_shard_tables.h"
#include "system/system_spec.h"

namespace tessera::runtime {

struct DlrmRecipe {
  graph::DlrmSpec model;  // tables, rows and dense must match data's (dlrm_recipe_check)
  DlrmDataSpec data;
  int batch = 4096;
  int64_t steps = 300;
  int64_t test = 32768;
  double lr = 0.05;
  float eps = 1e-10f;
  uint64_t seed = 0;  // the parameters'; the data's is data.seed
};

// Throws UsageError naming the flag for sizes < 1 or a model that does not match the data.
void dlrm_recipe_check(const DlrmRecipe& r);

inline constexpr int64_t kDlrmTestFirst = int64_t{1} << 40;

// The dense parameters' Adagrad: graph::Optimizer over dlrm_init's parameters.
graph::Optimizer dlrm_dense_optimizer(const DlrmRecipe& r, const DlrmParams& params);
// One step of `opt` on `params` by `grads` (both in dlrm_init's order).
void dlrm_dense_update(graph::Optimizer& opt, DlrmParams& params, const DlrmParams& grads);

class DlrmTrainer {
 public:
  virtual ~DlrmTrainer() = default;
  // One step; returns the batch's mean loss before the update.
  virtual double step(const DlrmBatch& b) = 0;
  // The logits of b's samples (no update).
  virtual std::vector<float> predict(const DlrmBatch& b) = 0;
};

class DlrmHostTrainer final : public DlrmTrainer {
 public:
  explicit DlrmHostTrainer(const DlrmRecipe& r);
  double step(const DlrmBatch& b) override;
  std::vector<float> predict(const DlrmBatch& b) override;
  int64_t rows_touched() const { return static_cast<int64_t>(m_index.size()); }

 private:
  float* row(int t, uint32_t id);
  std::vector<std::vector<float>> pool(const DlrmBatch& b);

  DlrmRecipe m_r;
  DlrmParams m_dense;
  graph::Optimizer m_opt;
  DlrmDenseStep m_step;
  std::unordered_map<uint64_t, int64_t> m_index;  // (table << 32 | id) -> row slot
  std::vector<float> m_rows, m_acc;
  int64_t m_steps = 0;
};

// Where the sharded trainer runs the dense part.
enum class DlrmDenseOn : uint8_t { kTensorCore, kHost };

// The sharded trainer's figures over the training steps.
struct DlrmShardFigures {
  int64_t steps = 0, cycles = 0;
  int64_t lookup_cycles = 0, tensor_cycles = 0, backward_cycles = 0, allreduce_cycles = 0;
  uint64_t id_bytes = 0, row_bytes = 0, grad_bytes = 0, dense_bytes = 0, packets = 0;
  uint64_t busiest_link_bytes = 0;  // summed over the exchanges
  int64_t rows_updated = 0;
};

class DlrmShardedTrainer final : public DlrmTrainer {
 public:
  // `ranks`: system::world() under mpirun (the fabric's simulation split over the ranks).
  DlrmShardedTrainer(const DlrmRecipe& r, const core::CoreSpec& core,
                     const system::SystemSpec& system, system::ShardPlacement placement,
                     ThreadPool* pool, RankGroup* ranks = nullptr,
                     DlrmDenseOn dense = DlrmDenseOn::kTensorCore);
  double step(const DlrmBatch& b) override;
  std::vector<float> predict(const DlrmBatch& b) override;
  const DlrmShardFigures& figures() const { return m_fig; }
  // The tensor cores' energy (pJ) over the training steps (DlrmChipDense::energy_pj); 0 with
  // DlrmDenseOn::kHost.
  double tensor_core_energy_pj() const { return m_chip ? m_chip->energy_pj() : 0; }
  const system::ShardedTables& tables() const { return *m_tables; }
  int processors() const { return m_P; }

 private:
  // Processor p's share of the batch: [first, first + count).
  std::pair<int, int> shard(int n, int p) const;
  std::vector<std::vector<system::LookupBags>> bags(const DlrmBatch& b) const;
  // Processor p's dense features and labels.
  DlrmBatch slice(const DlrmBatch& b, int p) const;

  DlrmRecipe m_r;
  int m_P;
  ThreadPool m_serial{1};
  ThreadPool* m_pool;
  std::unique_ptr<system::ShardedTables> m_tables;
  DlrmParams m_dense;
  graph::Optimizer m_opt;
  std::vector<DlrmDenseStep> m_steps;     // one per processor
  std::unique_ptr<DlrmChipDense> m_chip;  // the tensor cores (DlrmDenseOn::kTensorCore)
  int64_t m_now = 0;
  DlrmShardFigures m_fig;
};

struct DlrmEval {
  double log_loss = 0, auc = 0;
  double teacher_auc = 0;  // the planted teacher's logits as scores (the best reachable)
};

// The test samples through `trainer` (and the teacher).
DlrmEval evaluate_dlrm(const DlrmRecipe& r, DlrmTrainer& trainer);

// r.steps steps; after each, on_step(step, loss).
std::vector<double> train_dlrm(const DlrmRecipe& r, DlrmTrainer& trainer,
                               const std::function<void(int64_t, double)>& on_step);

}  // namespace tessera::runtime
