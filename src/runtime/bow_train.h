// Training of the bag-of-words topic classifier (graph/bow_model.h) on fortunes-topics
// (runtime/fortune_topics.h) on the host: the reference of the recipe
//   Adagrad (lr 0.1, lr_decay 0, eps 1e-10, accumulators from 0; PyTorch's sparse semantics for
//   the table: only the rows of the batch's distinct ids change), batch 64, epochs of the
//   training samples in epoch_order(n, seed, epoch) (runtime/dataset.h), last partial batch kept.
// A step runs the training graph of build_bow over the batch's distinct rows only (ids renumbered
// to their rank among the batch's distinct ids, ascending): its table gradient is then the
// coalesced sparse gradient, which the update applies row by row; fc.w and fc.b take the same
// per-element Adagrad (numerics/sparse_optimizer.h) with the same step count. Table rows are
// initialised when first touched (bow_table_row), so the host holds only the rows the data names.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/bow_model.h"
#include "graph/kernels.h"
#include "runtime/fortune_topics.h"

namespace tessera::runtime {

struct BowRecipe {
  graph::BowSpec model;  // classes from the data
  int batch = 64;
  int epochs = 5;
  double lr = 0.1, lr_decay = 0;
  float eps = 1e-10f;
  uint64_t seed = 0;
  int64_t steps = 0;  // > 0: at most this many steps per epoch
};

// fc.w and fc.b at the recipe's start: the zoo's dense layer (graph::init_params).
std::vector<std::vector<float>> bow_dense_init(const BowRecipe& recipe);

// A trainer of the recipe: the host reference below, or the chip (runtime/bow_chip.h).
class BowTrainer {
 public:
  virtual ~BowTrainer() = default;
  // One step on `batch` (training samples); returns its mean loss.
  virtual double step(std::span<const TopicSample* const> batch) = 0;
  // Fraction of `samples` whose largest logit is their label (ties: the lowest class).
  virtual double accuracy(std::span<const TopicSample> samples) = 0;
};

// Samples are evaluated in batches of this many.
inline constexpr int kBowEvalBatch = 512;

// The number of `samples` whose largest logit (`logits`: one row of `classes` per sample) is their
// label (ties: the lowest class).
int64_t bow_hits(std::span<const TopicSample* const> samples, const std::vector<float>& logits,
                 int classes);

class BowHostTrainer : public BowTrainer {
 public:
  // mode: fp32 (the reference) or chip numerics.
  BowHostTrainer(const BowRecipe& recipe, graph::Numerics mode);

  double step(std::span<const TopicSample* const> batch) override;
  double accuracy(std::span<const TopicSample> samples) override;
  // Current values (tests).
  const std::vector<float>& table_row(int32_t id);
  const std::vector<float>& table_state(int32_t id) { return row(id).s; }
  const std::vector<float>& fc_w() const { return m_w; }
  const std::vector<float>& fc_b() const { return m_b; }
  const std::vector<float>& fc_w_state() const { return m_sw; }
  const std::vector<float>& fc_b_state() const { return m_sb; }
  int64_t steps() const { return m_step; }

 private:
  struct Row {
    std::vector<float> p, s;  // values and Adagrad accumulators
  };
  Row& row(int32_t id);
  // The batch's logits (training false) or its step (true): returns the loss.
  double run(std::span<const TopicSample* const> batch, bool training, std::vector<float>* logits);

  BowRecipe m_r;
  graph::Numerics m_mode;
  std::vector<float> m_w, m_b, m_sw, m_sb;
  std::unordered_map<int32_t, Row> m_rows;
  int64_t m_step = 0;
};

struct BowEpoch {
  int epoch = 0;  // 1-based
  int64_t steps = 0;
  double loss = 0;           // mean over the epoch's steps
  double test_accuracy = 0;  // after the epoch
  double host_seconds = 0;   // the epoch's training and evaluation
};

// Where the epoch loop is: the epoch in progress (0-based), the steps done in it and the sum of
// their losses, and the finished epochs. As JSON (checkpoints' progress "loop"): an Error naming
// "checkpoint" for a malformed one.
struct BowPosition {
  int epoch = 0;
  int64_t step = 0;
  double loss_sum = 0;
  std::vector<BowEpoch> epochs;
};
nlohmann::ordered_json bow_position_json(const BowPosition& p);
BowPosition bow_position(const nlohmann::ordered_json& j);

// The identity of a bow checkpoint (runtime/checkpoint.h check_identity): model "bow", the table's
// and the dense layer's shapes, the optimizer and its hyper-parameters, batch, epochs, steps per
// epoch, seed, and the config's name and hash.
nlohmann::ordered_json bow_identity(const BowRecipe& recipe, const std::string& config,
                                    const std::string& config_hash);

// Called after every training step with the position after it (epoch_end false), and after every
// epoch's evaluation with the next epoch's start (epoch_end true); false stops the loop there.
using BowAfterStep = std::function<bool(const BowPosition& position, bool epoch_end)>;

// The recipe's epochs on `data` with `trainer` (built for the recipe with the data's classes),
// from `from` (a resumed run's position, the trainer restored to it); `on_epoch` sees each epoch
// as it ends. Returns every finished epoch (those of `from` first).
std::vector<BowEpoch> train_bow(const TopicCorpus& data, const BowRecipe& recipe,
                                BowTrainer& trainer,
                                const std::function<void(const BowEpoch&)>& on_epoch = {},
                                const BowPosition& from = {}, const BowAfterStep& after_step = {});
// The same on the host reference (classes from the data).
std::vector<BowEpoch> train_bow_host(const TopicCorpus& data, BowRecipe recipe,
                                     graph::Numerics mode,
                                     const std::function<void(const BowEpoch&)>& on_epoch = {});

}  // namespace tessera::runtime
