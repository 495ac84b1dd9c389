#include "compiler/lower_sparse.h"

#include <algorithm>

#include "common/error.h"

namespace tessera::compiler {

using core::SparseDescriptor;
using numerics::Combiner;

int64_t SparseBagPlan::out_words() const {
  const int64_t rows = shape.combiner == Combiner::None ? shape.capacity : shape.bags;
  return rows * shape.dim;
}

SparseBagPlan plan_sparse_bag(const SparseBagShape& shape, const SparseBagPlacement& at) {
  if (shape.rows < 1 || shape.dim < 1 || shape.bags < 1 || shape.capacity < 0)
    throw Error("sparse lowering", "embedding_bag needs a table and at least one bag");
  SparseBagPlan p;
  p.shape = shape;
  p.ready_flag = at.ready_flag;
  p.grads_flag = at.grads_flag;
  int64_t next = at.base;
  auto take = [&](int64_t words) {
    const int64_t addr = next;
    next += std::max<int64_t>(words, 1);
    return addr;
  };
  p.in.bags = shape.bags;
  p.in.offsets = take(shape.bags + 1);
  p.in.ids = at.ids >= 0 ? at.ids : take(shape.capacity);
  const int64_t words = p.out_words();
  if (at.vmem_out >= 0 && words * 4 <= at.vmem_handoff_bytes) {
    p.to = core::SparseDest::Vmem;
    p.out = at.vmem_out;
    if (at.hbm_copy) p.out_hbm = take(words);
  } else {
    p.to = core::SparseDest::Hbm;
    p.out = p.out_hbm = take(words);
  }
  p.dy = take(words);
  if (at.dense) {
    p.dense_grad = at.dense_grad >= 0 ? at.dense_grad : take(shape.rows * shape.dim);
    p.grad_ready_flag = at.grad_ready_flag;
    p.end = next;
    return p;
  }
  const int64_t distinct = std::min(shape.capacity, shape.rows);
  p.unique = take(distinct);
  p.count = take(1);
  p.inverse = take(shape.capacity);
  p.row_grads = take(distinct * shape.dim);
  p.state = at.state >= 0 ? at.state : take(shape.rows * shape.dim);
  p.end = next;
  return p;
}

std::vector<SparseDescriptor> sparse_forward(const SparseBagPlan& p) {
  return {{core::SparseGather{p.shape.table, p.in, p.shape.combiner, p.to, p.out}, p.ready_flag}};
}

std::vector<SparseDescriptor> sparse_backward(const SparseBagPlan& p, const SparseBagOptimizer& o) {
  const int t = p.shape.table;
  if (p.dense_grad >= 0) {
    core::SparseScatterAdd add{t, p.in, p.shape.combiner, p.dy, 0, 0, p.dense_grad};
    add.dense = true;
    return {{core::SparseWait{p.grads_flag, 1}}, {add, p.grad_ready_flag}};
  }
  return {
      {core::SparseDedup{p.in, p.unique, p.count, p.inverse}},
      {core::SparseWait{p.grads_flag, 1}},
      {core::SparseScatterAdd{t, p.in, p.shape.combiner, p.dy, p.inverse, p.count, p.row_grads}},
      {core::SparseUpdate{t, p.unique, p.count, p.row_grads, o.kind, o.lr, o.lr_decay, o.eps,
                          p.state}},
  };
}

}  // namespace tessera::compiler
