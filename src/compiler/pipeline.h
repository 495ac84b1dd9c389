// The state the compiler's passes hand each other (internal to compiler/).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/codegen.h"
#include "compiler/compiler.h"
#include "compiler/data_parallel.h"
#include "graph/autodiff.h"

namespace tessera::compiler {

struct Pipeline {
  const core::CoreSpec* spec = nullptr;
  CompileOptions options;
  graph::Model model;
  graph::Graph graph;  // forward (inference) or training graph
  int x = -1, labels = -1, loss = -1, logits = -1;
  std::vector<int> params, grads;  // value ids in `graph`, aligned with model.params
  // The model's state (graph::Model::state) in `graph`: the values and their updates (-1: none,
  // and always -1 in inference).
  std::vector<int> state, state_updates;
  std::map<int, int64_t> hbm;               // value id -> HBM word address
  std::map<int, std::pair<int, int>> live;  // value id -> [first, last] node index (transients)
  int64_t ones_hbm = -1;                    // the constant 1.0 (d loss / d loss)
  int64_t scratch_words = 0;                // kernels' HBM scratch above the plan (lower_conv_op)
  CompiledProgram out;
  // allreduce / buckets: the core the image runs on (`spec` is the one the step was lowered for)
  // and the image's parts.
  const core::CoreSpec* machine = nullptr;
  DataParallelImage image;
};

void pass_autodiff(Pipeline& p);
void pass_plan_hbm(Pipeline& p);
void pass_lower(Pipeline& p);
// The gradient all-reduce (data_parallel.h): the program becomes the data-parallel image.
void pass_allreduce(Pipeline& p);
void pass_bucket_allreduce(Pipeline& p);

// Lowers one node at the addresses of p.hbm (pass lower's kernel per node, without its rolling
// of long kernels): the inference lowering of a graph that is not a model (suite/row_program.h).
void lower_node(Pipeline& p, Codegen& cg, const graph::Node& n);
// The same with pass lower's rolling: a kernel longer than 2,048 bundles has its periodic stretches
// rolled into loops (nested when the emitter's nested rolling is on).
void lower_node_rolled(Pipeline& p, Codegen& cg, const graph::Node& n);
// The operands of one node as its lowering reads them: the output value and its address, the
// inputs' addresses and shapes.
class NodeOperands {
 public:
  NodeOperands(const Pipeline& p, const graph::Node& n)
      : out(p.graph.value(n.output)), dst(p.hbm.at(n.output)), m_p(p), m_n(n) {}
  const graph::Shape& shape(size_t i) const { return m_p.graph.value(m_n.inputs.at(i)).shape; }
  int64_t in(size_t i) const { return m_p.hbm.at(m_n.inputs.at(i)); }

  const graph::Value& out;
  const int64_t dst;

 private:
  const Pipeline& m_p;
  const graph::Node& m_n;
};

// Lowers a node of the transformer ops (lower_transformer.cpp); false for any other op.
bool lower_transformer_op(Pipeline& p, Codegen& cg, const graph::Node& n);
// Lowers a node of the element-wise math and view ops (lower_math_views.cpp); false for any
// other op.
bool lower_math_view_op(Pipeline& p, Codegen& cg, const graph::Node& n);
// Lowers a node of batch normalisation's per-channel ops (lower_batch_norm.cpp); false for any
// other op.
bool lower_batch_norm_op(Pipeline& p, Codegen& cg, const graph::Node& n);

// embedding_bag (or embedding) on the sparse core (lower_sparse_step.cpp, sparse_step.h).
// plan_sparse_step: lays out the sparse core's buffers from HBM word `next` (advanced past them)
// and fixes the addresses of the values they hold, before plan-hbm places the transient values;
// nothing for a model without embedding_bag. lower_sparse_op: the tensor core's side of the
// hand-offs; false for any other op.
void plan_sparse_step(Pipeline& p, int64_t& next);
bool lower_sparse_op(Pipeline& p, Codegen& cg, const graph::Node& n);
// The optimizer section's first op when the sparse core writes an embedding's dense gradient: the
// wait on its flag (sparse_step.h); nothing otherwise.
void lower_sparse_optimizer_wait(Pipeline& p, Codegen& cg);

// Checks after each pass (tessera::Error on a broken invariant).
void verify_plan(const Pipeline& p);
std::string dump_plan(const Pipeline& p);

}  // namespace tessera::compiler
