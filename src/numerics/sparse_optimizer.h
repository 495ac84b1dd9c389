// Row-wise sparse optimizer updates: the arithmetic of the sparse core's update descriptor
// (core/sparse_core.h) and of its host references, defined once here; and dense Adagrad, the same
// per-element arithmetic over a whole tensor (graph/optimizer.h, and the tensor core's lowering in
// compiler/kernels_adagrad.h). A sparse gradient is a set
// of distinct rows (coalesced: duplicate ids summed first); each call updates one row of `dim`
// fp32 elements in place, element by element, in fp32.
//
// SGD (PyTorch SGD on a sparse gradient, no momentum): p += (-lr) * g.
// Adagrad (PyTorch Adagrad on a sparse gradient; weight decay is not defined for sparse
// gradients): with the parameter's step count t (incremented once per optimizer step, 1 on the
// first) and clr = lr / (1 + (t - 1) * lr_decay) computed in fp64 and rounded to fp32:
//   s += g * g;  std = sqrt(s) + eps;  p += (-clr) * (g / std)
// Only the rows of the gradient change, accumulators s included.
#pragma once

#include <cstdint>

namespace tessera::numerics {

// SGD: p[i] += (-lr) * g[i] for i in [0, dim).
void sparse_sgd_row(float* p, const float* g, int64_t dim, float lr);

// clr of Adagrad's step t (t >= 1), rounded to fp32.
float adagrad_step_lr(double lr, double lr_decay, int64_t t);

// Adagrad: s[i] += g[i] * g[i]; p[i] += (-clr) * (g[i] / (sqrt(s[i]) + eps)) for i in [0, n).
// Dense Adagrad is this over every element of a parameter.
void adagrad_update(float* p, float* s, const float* g, int64_t n, float clr, float eps);
// One row of a sparse gradient: adagrad_update over its dim elements.
void sparse_adagrad_row(float* p, float* s, const float* g, int64_t dim, float clr, float eps);

}  // namespace tessera::numerics
