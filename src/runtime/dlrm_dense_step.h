// The DLRM's dense part (graph/dlrm_model.h) on the host reference executor in fp32: the forward
// graph for scores, the training graph (forward + loss + autodiff's backward) for gradients. A
// graph is built per (batch size, loss scale) on first use and kept with its executor.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "graph/dlrm_model.h"
#include "runtime/dlrm_data.h"

namespace tessera::runtime {

// Every run's inputs besides the batch: the dense parameters (graph::dlrm_init's order) and the
// pooled bags (pooled[t]: b.n x D, table t's bag sums).
using DlrmParams = std::vector<std::vector<float>>;
using DlrmPooled = std::vector<std::vector<float>>;

// The graph's "bags" value [T, n, D]: the tables' results one after another; and back.
std::vector<float> dlrm_bags(const DlrmPooled& pooled);
std::vector<std::vector<float>> dlrm_split_bags(const std::vector<float>& bags, int tables);

struct DlrmDenseGrads {
  std::vector<float> logits;             // [b.n]
  DlrmParams dense;                      // the dense parameters' gradients, in their order
  std::vector<std::vector<float>> bags;  // d loss / d pooled[t], b.n x D each
};

class DlrmDenseStep {
 public:
  explicit DlrmDenseStep(const graph::DlrmSpec& spec);
  ~DlrmDenseStep();
  DlrmDenseStep(DlrmDenseStep&&) noexcept;

  // b's logits (b.labels are bound but not used).
  std::vector<float> forward(const DlrmParams& p, const DlrmBatch& b, const DlrmPooled& pooled);
  // Forward and backward of the mean BCE over b's samples times b.n / global (b is a share of a
  // global batch of `global` samples; global = b.n for a whole batch).
  DlrmDenseGrads backward(const DlrmParams& p, const DlrmBatch& b, const DlrmPooled& pooled,
                          int global);

 private:
  struct Program;
  Program& program(int n, int global, bool training);
  // Binds the parameters, the bags, x and the labels, and runs.
  Program& run(const DlrmParams& p, const DlrmBatch& b, const DlrmPooled& pooled, int global,
               bool training);

  graph::DlrmSpec m_spec;
  std::map<std::tuple<int, int, bool>, std::unique_ptr<Program>> m_programs;
};

}  // namespace tessera::runtime
