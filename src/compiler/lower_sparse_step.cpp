// The sparse-core lookup in the compiled step (sparse_step.h): plan-hbm's sparse-core buffers and
// the tensor core's side of the hand-offs. One lookup per step, its ids the model's input x, its
// table a parameter: an embedding_bag, or an `embedding` with CompileOptions::embedding_on
// kSparseCore (an embedding_bag of one id per bag, combiner none). An embedding_bag's table trains
// with Adagrad (PyTorch's sparse Adagrad on the sparse core; the dense parameters take dense
// Adagrad on the tensor core); an embedding's table gradient is written dense by the sparse core
// and updated by the tensor core's optimizer with the other parameters.
#include <algorithm>

#include "common/error.h"
#include "compiler/pipeline.h"
#include "compiler/sparse_step.h"

namespace tessera::compiler {

using graph::OpKind;
using isa::Opcode;

namespace {

// The lookup node the sparse core runs: the graph's embedding_bag, or its embedding when
// `embeddings` is set; nullptr for none; an Error for more than one.
const graph::Node* lookup_node(const graph::Graph& g, bool embeddings) {
  const graph::Node* found = nullptr;
  for (const graph::Node& n : g.nodes()) {
    if (n.op != OpKind::kEmbeddingBag && !(embeddings && n.op == OpKind::kEmbedding)) continue;
    if (found)
      throw Error("compiler", std::string(graph::op_name(n.op)) + " '" + g.value(n.output).name +
                                  "': the sparse-core lowering takes one lookup per step");
    found = &n;
  }
  return found;
}

const graph::Node* producer(const graph::Graph& g, int value) {
  const int at = g.value(value).producer;
  return at < 0 ? nullptr : &g.node(at);
}

// The DMA request whose operands are sD = dst, sA = src, sB = count, in fresh registers.
void dma_with_flag(Codegen& cg, Opcode op, int64_t dst, int64_t src, int64_t count, int flag) {
  const int d = cg.sreg(), a = cg.sreg(), b = cg.sreg();
  cg.sli(d, dst);
  cg.sli(a, src);
  cg.sli(b, count);
  cg.op(op, d, a, b, flag);
}

// The sparse-core optimizer of an embedding_bag's table (Adagrad only).
SparseBagOptimizer bag_optimizer(const graph::OptimizerConfig& o, const std::string& name) {
  if (o.kind != graph::OptimizerKind::kAdagrad)
    throw Error("compiler", "embedding_bag '" + name +
                                "': a sparse table trains with Adagrad only (the sparse core's "
                                "update), not " +
                                (o.kind == graph::OptimizerKind::kAdam ? "adam" : "sgd"));
  return SparseBagOptimizer{core::SparseOptimizer::Adagrad, o.lr, o.lr_decay,
                            static_cast<float>(o.eps)};
}

}  // namespace

void plan_sparse_step(Pipeline& p, int64_t& next) {
  const graph::Graph& g = p.graph;
  const graph::Node* node = lookup_node(g, p.options.embedding_on == EmbeddingOn::kSparseCore);
  if (node == nullptr) return;
  const bool bag = node->op == OpKind::kEmbeddingBag;
  const std::string what =
      std::string(graph::op_name(node->op)) + " '" + g.value(node->output).name + "'";
  const int table = bag ? node->inputs[2] : node->inputs[0];
  const int ids = bag ? node->inputs[0] : node->inputs[1];
  const auto it = std::find(p.params.begin(), p.params.end(), table);
  if (it == p.params.end()) throw Error("compiler", what + ": its table must be a parameter");
  if (ids != p.x) throw Error("compiler", what + ": its ids must be the model's input");
  if (!bag && p.options.allreduce)
    throw Error("compiler", what + ": an embedding on the sparse core trains on one processor");
  SparseStep& s = p.out.sparse;
  s.used = true;
  s.param = static_cast<int>(it - p.params.begin());
  if (bag && p.options.training) s.optimizer = bag_optimizer(p.options.optimizer, what);
  const graph::Shape& rows_dim = g.value(table).shape;
  const int64_t n = graph::num_elements(g.value(ids).shape);
  const SparseBagShape shape{0,
                             rows_dim[0],
                             rows_dim[1],
                             bag ? g.value(node->inputs[1]).shape[0] - 1 : n,
                             bag ? g.value(ids).shape[0] : n,
                             bag ? node->attrs.combiner : numerics::Combiner::None};
  SparseBagPlacement at;
  at.base = next;
  at.vmem_out = 0;
  at.vmem_handoff_bytes = std::min(p.spec->sparse.vmem_handoff_bytes, p.spec->vmem_bytes);
  at.ready_flag = kSparseReadyFlag;
  at.grads_flag = kSparseGradsFlag;
  at.ids = p.hbm.at(p.x);
  at.state = bag ? p.out.state.at(static_cast<size_t>(s.param)).hbm : -1;
  at.hbm_copy = true;
  const int grad = p.options.training ? p.grads.at(static_cast<size_t>(s.param)) : -1;
  if (!bag && grad >= 0) {
    // The table-shaped gradient: where plan-hbm already put it (persistent gradients), else here.
    at.dense = true;
    at.dense_grad = p.hbm.count(grad) ? p.hbm.at(grad) : -1;
    at.grad_ready_flag = kSparseGradReadyFlag;
  }
  s.plan = plan_sparse_bag(shape, at);
  s.handoff_word = s.plan.end;
  next = s.plan.end + 1;
  if (bag) p.hbm[node->inputs[1]] = s.plan.in.offsets;
  p.hbm[node->output] = s.plan.out_hbm;
  if (grad < 0) return;
  const graph::Node* back = producer(g, grad);
  const OpKind want = bag ? OpKind::kEmbeddingBagGrad : OpKind::kEmbeddingGrad;
  if (back == nullptr || back->op != want)
    throw Error("compiler", what + ": the table's gradient must be " +
                                std::string(graph::op_name(want)) +
                                " alone (the table is used once)");
  p.hbm[back->inputs[0]] = s.plan.dy;
  p.hbm[grad] = bag ? s.plan.row_grads : s.plan.dense_grad;
}

bool lower_sparse_op(Pipeline& p, Codegen& cg, const graph::Node& n) {
  const SparseStep& s = p.out.sparse;
  const bool embedding = p.options.embedding_on == EmbeddingOn::kSparseCore;
  if (n.op == OpKind::kEmbeddingBag || (embedding && n.op == OpKind::kEmbedding)) {
    TESSERA_CHECK(s.used, "a lookup without a sparse-core plan");
    cg.wait_dmas();
    cg.em().barrier();
    cg.op(Opcode::WAIT, 0, s.plan.ready_flag, 0, 0, 1);
    cg.em().barrier();
    if (s.plan.to == core::SparseDest::Vmem) {
      const int64_t words = s.plan.out_words();
      cg.touch_rows((s.plan.out + words + cg.spec().lanes - 1) / cg.spec().lanes);
      cg.dma(Opcode::DMAVH, s.plan.out_hbm, s.plan.out, words);
      cg.wait_dmas();
    }
    return true;
  }
  if (n.op == OpKind::kEmbeddingBagGrad || (embedding && n.op == OpKind::kEmbeddingGrad)) {
    TESSERA_CHECK(s.used && p.options.training, "a lookup's gradient without a sparse-core plan");
    cg.wait_dmas();  // dy is in HBM
    dma_with_flag(cg, Opcode::DMAVHSC, s.handoff_word, 0, 1, s.plan.grads_flag);
    cg.em().barrier();
    return true;
  }
  return false;
}

void lower_sparse_optimizer_wait(Pipeline& p, Codegen& cg) {
  const SparseStep& s = p.out.sparse;
  if (!s.used || s.plan.dense_grad < 0) return;
  cg.op(Opcode::WAIT, 0, s.plan.grad_ready_flag, 0, 0, 1);
  cg.em().barrier();
}

}  // namespace tessera::compiler
