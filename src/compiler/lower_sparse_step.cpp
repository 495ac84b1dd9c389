// embedding_bag in the compiled step (sparse_step.h): plan-hbm's sparse-core buffers and the
// tensor core's side of the hand-offs. One embedding_bag per step, its ids the model's input x,
// its table a parameter; training needs Adagrad (the table's update is PyTorch's sparse Adagrad
// on the sparse core; the dense parameters take dense Adagrad on the tensor core).
#include <algorithm>

#include "common/error.h"
#include "compiler/pipeline.h"
#include "compiler/sparse_step.h"

namespace tessera::compiler {

using graph::OpKind;
using isa::Opcode;

namespace {

// The graph's embedding_bag node, or nullptr; an Error for more than one.
const graph::Node* bag_node(const graph::Graph& g) {
  const graph::Node* found = nullptr;
  for (const graph::Node& n : g.nodes()) {
    if (n.op != OpKind::kEmbeddingBag) continue;
    if (found)
      throw Error("compiler", "embedding_bag '" + g.value(n.output).name +
                                  "': the sparse-core lowering takes one embedding_bag per step");
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

}  // namespace

void plan_sparse_step(Pipeline& p, int64_t& next) {
  const graph::Graph& g = p.graph;
  const graph::Node* bag = bag_node(g);
  if (bag == nullptr) return;
  const std::string& name = g.value(bag->output).name;
  const int table = bag->inputs[2];
  const auto it = std::find(p.params.begin(), p.params.end(), table);
  if (it == p.params.end())
    throw Error("compiler", "embedding_bag '" + name + "': its table must be a parameter");
  if (bag->inputs[0] != p.x)
    throw Error("compiler", "embedding_bag '" + name + "': its ids must be the model's input");
  SparseStep& s = p.out.sparse;
  s.used = true;
  s.param = static_cast<int>(it - p.params.begin());
  const graph::OptimizerConfig& o = p.options.optimizer;
  if (p.options.training) {
    if (o.kind != graph::OptimizerKind::kAdagrad)
      throw Error("compiler", "embedding_bag '" + name +
                                  "': a sparse table trains with Adagrad only (the sparse core's "
                                  "update), not " +
                                  (o.kind == graph::OptimizerKind::kAdam ? "adam" : "sgd"));
    s.optimizer = SparseBagOptimizer{core::SparseOptimizer::Adagrad, o.lr, o.lr_decay,
                                     static_cast<float>(o.eps)};
  }
  const graph::Shape& rows_dim = g.value(table).shape;
  const SparseBagShape shape{0,
                             rows_dim[0],
                             rows_dim[1],
                             g.value(bag->inputs[1]).shape[0] - 1,
                             g.value(bag->inputs[0]).shape[0],
                             bag->attrs.combiner};
  SparseBagPlacement at;
  at.base = next;
  at.vmem_out = 0;
  at.vmem_handoff_bytes = std::min(p.options.vmem_handoff_bytes, p.spec->vmem_bytes);
  at.ready_flag = kSparseReadyFlag;
  at.grads_flag = kSparseGradsFlag;
  at.ids = p.hbm.at(p.x);
  at.state = p.out.state.at(static_cast<size_t>(s.param)).hbm;
  at.hbm_copy = true;
  s.plan = plan_sparse_bag(shape, at);
  s.handoff_word = s.plan.end;
  next = s.plan.end + 1;
  p.hbm[bag->inputs[1]] = s.plan.in.offsets;
  p.hbm[bag->output] = s.plan.out_hbm;
  if (!p.options.training) return;
  const int grad = p.grads.at(static_cast<size_t>(s.param));
  const graph::Node* back = producer(g, grad);
  if (back == nullptr || back->op != OpKind::kEmbeddingBagGrad)
    throw Error("compiler", "embedding_bag '" + name +
                                "': the table's gradient must be embedding_bag_grad alone (the "
                                "table is used once)");
  p.hbm[back->inputs[0]] = s.plan.dy;
  p.hbm[grad] = s.plan.row_grads;
}

bool lower_sparse_op(Pipeline& p, Codegen& cg, const graph::Node& n) {
  const SparseStep& s = p.out.sparse;
  if (n.op == OpKind::kEmbeddingBag) {
    TESSERA_CHECK(s.used, "embedding_bag without a sparse-core plan");
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
  if (n.op == OpKind::kEmbeddingBagGrad) {
    TESSERA_CHECK(s.used && p.options.training, "embedding_bag_grad without a sparse-core plan");
    cg.wait_dmas();  // dy is in HBM
    dma_with_flag(cg, Opcode::DMAVHSC, s.handoff_word, 0, 1, s.plan.grads_flag);
    cg.em().barrier();
    return true;
  }
  return false;
}

}  // namespace tessera::compiler
