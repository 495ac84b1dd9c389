#include "onnx/permuted_rows.h"

#include "onnx/fold.h"

namespace tessera::onnx_import {

int unpermuted_rows(Context& c, int a, Tensor& b) {
  const graph::Graph& g = c.graph();
  const graph::Value& av = g.value(a);
  if (av.producer < 0 || g.node(av.producer).op != graph::OpKind::kReshape) return -1;
  const graph::Value& pv = g.value(g.node(av.producer).inputs[0]);
  if (pv.producer < 0 || g.node(pv.producer).op != graph::OpKind::kPermute) return -1;
  const graph::Shape perm = g.node(pv.producer).attrs.perm;
  const int y = g.node(pv.producer).inputs[0];
  const int64_t r = static_cast<int64_t>(perm.size()) - 1;
  if (r < 1 || perm[0] != 0 || av.shape.size() != 2 || av.shape[0] != pv.shape[0] ||
      b.shape.size() != 2 || b.shape[0] != av.shape[1])
    return -1;
  // B's rows as the permuted dims [p1, ..., pr, M], transposed to y's dims: y dim d is permuted
  // dim i where perm[i] = d.
  graph::Shape split(pv.shape.begin() + 1, pv.shape.end()), order(static_cast<size_t>(r) + 1);
  split.push_back(b.shape[1]);
  const graph::Shape inverse = inverse_permutation(perm);
  for (int64_t d = 0; d < r; ++d) order[static_cast<size_t>(d)] = inverse[d + 1] - 1;
  order[static_cast<size_t>(r)] = r;
  Tensor rows = b;
  rows.shape = split;
  rows = fold::transpose(rows, order);
  rows.shape = b.shape;
  b = std::move(rows);
  const graph::Shape ys = g.value(y).shape;  // a copy: reshape may add a value
  return c.reshape(y, {ys[0], graph::num_elements(ys) / ys[0]});
}

}  // namespace tessera::onnx_import
