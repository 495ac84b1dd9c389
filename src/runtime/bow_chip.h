// BowChipTrainer: the bag-of-words recipe (runtime/bow_train.h) on one simulated processor, its
// tensor core and its sparse core (compiler/sparse_step.h, docs/sparse-core.md).
//
// The compiler's programs for the model (one per batch size, training and inference; they share
// the parameters' and the optimizer state's HBM addresses) run on one timed core whose HBM keeps
// the table, fc.w, fc.b and their Adagrad accumulators across steps. A program's id capacity is
// its batch times the longest bag the trainer was told of (`max_bag`). Per run the host writes the
// ids, offsets and labels into HBM (host-link bytes, timed at host_bytes_per_second) and, in
// training, the step's clr; then the sparse core gathers (from the tensor core's cycle, or when it
// is free, if later), the tensor core runs the program and, in training, the sparse core runs the
// backward descriptors. Table rows are written into HBM the first time a batch names them, with
// graph::bow_table_row's values (the same values as a whole table written at the start; HBM stays
// lazily paged, so host memory follows the rows the data touches).
//
// Figures of the training steps only (evaluation excluded; BowChipFigures).
//
// Checkpoints (runtime/checkpoint.h; the caller sets the identity, bow_identity): params are fc.w,
// fc.b and the rows training steps named (ids ascending, `dim` words each), state their Adagrad
// accumulators in the same order; progress "bow" holds those ids, the step count (the host's clr
// and the sparse core's table step), the figures and the cycle both units were done at. A trainer
// restored from one continues bit for bit as the one that wrote it: values, and the figures of
// the steps after it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <unordered_set>
#include <vector>

#include "compiler/compiler.h"
#include "core/core.h"
#include "runtime/bow_train.h"
#include "runtime/checkpoint.h"

namespace tessera::runtime {

struct BowChipOptions {
  int64_t max_bag = 1;                  // the longest bag any batch holds
  double host_bytes_per_second = 16e9;  // host link into HBM
};

// Sums over the training steps.
struct BowChipFigures {
  int64_t steps = 0;
  int64_t cycles = 0;         // from both units' end of the previous run to the later end
  int64_t tensor_cycles = 0;  // from the same start to the tensor core's end (its wait included)
  int64_t sparse_busy = 0;    // cycles the sparse core executed a descriptor (waits excluded)
  int64_t sparse_wait = 0;    // cycles its wait descriptor waited for the tensor core
  int64_t overlap = 0;        // sparse_busy cycles while the tensor core ran past its wait
  int64_t row_reads = 0, row_writes = 0;  // table and accumulator rows
  int64_t row_bytes = 0;                  // their HBM bytes (whole requests)
  int64_t sparse_hbm_read_bytes = 0, sparse_hbm_write_bytes = 0;  // all the unit's HBM traffic
  int64_t vmem_handoff_bytes = 0;  // bytes the sparse core wrote into vector memory
  int64_t vmem_steps = 0;          // steps whose bag result went through vector memory
  int64_t host_link_bytes = 0;
  double host_link_seconds = 0;

  // `v` per step (0 before the first step), and overlap / sparse_busy (0 when idle).
  double per_step(int64_t v) const {
    return steps > 0 ? static_cast<double>(v) / static_cast<double>(steps) : 0.0;
  }
  double overlap_share() const {
    return sparse_busy > 0 ? static_cast<double>(overlap) / static_cast<double>(sparse_busy) : 0.0;
  }
};

// The longest bag of `data`'s training and test samples (BowChipOptions::max_bag).
int64_t longest_bag(const TopicCorpus& data);

class BowChipTrainer : public BowTrainer {
 public:
  // recipe.model.classes must be set. Throws Error when a program does not compile for `spec`.
  BowChipTrainer(const BowRecipe& recipe, const core::CoreSpec& spec, const BowChipOptions& o);

  double step(std::span<const TopicSample* const> batch) override;
  double accuracy(std::span<const TopicSample> samples) override;

  // Current values in HBM (tests).
  std::vector<float> table_row(int32_t id);
  std::vector<float> table_state(int32_t id) const;
  std::vector<float> fc_w() const;
  std::vector<float> fc_b() const;
  std::vector<float> fc_w_state() const;
  std::vector<float> fc_b_state() const;
  int64_t steps() const { return m_steps; }

  // The training state as a checkpoint (identity empty).
  Checkpoint checkpoint() const;
  // Continues from `c` (a fresh trainer only). Throws Error for a checkpoint of another model or
  // shape: no "bow" progress, tensors of other sizes, an id outside the table.
  void restore(const Checkpoint& c);

  const BowChipFigures& figures() const { return m_fig; }
  const core::Core& core() const { return *m_core; }
  const compiler::CompiledProgram& program(int n, bool training);

 private:
  // The batch into HBM (ids, offsets, labels; rows first named); returns the host-link bytes.
  int64_t write_batch(const compiler::CompiledProgram& p,
                      std::span<const TopicSample* const> batch);
  // One run of `p`; in training with its figures into m_fig.
  void run(const compiler::CompiledProgram& p, bool training);
  std::vector<float> read(int64_t addr, int64_t n) const;
  const compiler::CompiledProgram& trained() const;

  BowRecipe m_r;
  core::CoreSpec m_spec;
  BowChipOptions m_o;
  std::map<std::pair<int, bool>, std::unique_ptr<compiler::CompiledProgram>> m_programs;
  std::unique_ptr<core::Core> m_core;
  std::unordered_set<int32_t> m_written;  // table rows in HBM
  std::unordered_set<int32_t> m_trained;  // of which training steps named (checkpoints)
  int64_t m_steps = 0;
  BowChipFigures m_fig;
};

}  // namespace tessera::runtime
