// The transformer cases of pass lower: shapes and attributes as the host executor reads them
// (graph/executor.cpp), then the kernels of kernels_rows.h, kernels_pointwise.h and
// kernels_permute.h, or GEMMs on the MXU:
//   embedding(_grad)                                DMA gather; scatter-add in vector memory
//   layer_norm(_grad, _gain_grad), softmax(_grad)   row kernels (vector unit, reduce unit, EUP)
//   gelu(_grad), scale, mul, dropout                streamed element-wise kernels (EUP, RNG unit)
//   batch_matmul                                    per batch one GEMM (kernels/gemm); a
//                                                   transposed operand first through the
//                                                   transpose unit into HBM scratch; the
//                                                   batches rolled into one loop
//   permute                                         gathering 2-D DMAs
//   select, select_grad                             copies (and zeroing) through vector memory
#include <algorithm>
#include <numeric>

#include "compiler/kernels.h"
#include "compiler/kernels_conv.h"
#include "compiler/kernels_embedding.h"
#include "compiler/kernels_permute.h"
#include "compiler/kernels_pointwise.h"
#include "compiler/kernels_rows.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

namespace {

int64_t elements(const graph::Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

void lower_batch_matmul(Pipeline& p, Codegen& cg, HbmScratch& scratch, const graph::Node& n) {
  const graph::Graph& g = p.graph;
  const graph::Value& out = g.value(n.output);
  const graph::Shape& sa = g.value(n.inputs[0]).shape;
  const size_t r = out.shape.size();
  const int64_t M = out.shape[r - 2], N = out.shape[r - 1];
  const int64_t K = n.attrs.transpose_a ? sa[r - 2] : sa[r - 1];
  const int64_t batches = elements(out.shape) / (M * N);
  int64_t at = 0;
  const int64_t ta = n.attrs.transpose_a ? scratch_take(scratch, at, M * K, out.name + ".a_t") : -1;
  const int64_t tb = n.attrs.transpose_b ? scratch_take(scratch, at, K * N, out.name + ".b_t") : -1;
  const int64_t a = p.hbm.at(n.inputs[0]), b = p.hbm.at(n.inputs[1]), c = p.hbm.at(n.output);
  const int64_t smem = cg.next_smem();  // the batches' GEMMs share one set of descriptors
  const int64_t first = cg.em().size();
  for (int64_t i = 0; i < batches; ++i) {  // identical but for affine HBM addresses: rolled below
    cg.restart_pools();
    int64_t ai = a + i * M * K, bi = b + i * K * N;
    if (ta >= 0) {
      emit_transpose(cg, out.name + ".a_t", ai, ta, K, M);
      ai = ta;
    }
    if (tb >= 0) {
      emit_transpose(cg, out.name + ".b_t", bi, tb, N, K);
      bi = tb;
    }
    emit_gemm(cg, p.out.stats, out.name, ai, bi, c + i * M * N, static_cast<int>(M),
              static_cast<int>(K), static_cast<int>(N), smem, false);
  }
  cg.em().roll_since(first);
}

}  // namespace

bool lower_transformer_op(Pipeline& p, Codegen& cg, const graph::Node& n) {
  using graph::OpKind;
  const NodeOperands o(p, n);
  const graph::Value& out = o.out;
  const std::string& name = out.name;
  const graph::Attrs& a = n.attrs;
  const int64_t dst = o.dst;
  const int64_t size = elements(out.shape);
  const int64_t last = out.shape.empty() ? 1 : out.shape.back();
  HbmScratch scratch{p.out.stats.hbm_words, p.spec->hbm_bytes / 4, p.scratch_words};
  const int64_t first = cg.em().size();
  switch (n.op) {
    case OpKind::kEmbedding:
      emit_embedding(cg, name, o.in(0), o.in(1), dst, elements(o.shape(1)), last);
      break;
    case OpKind::kEmbeddingGrad:
      emit_embedding_grad(cg, name, o.in(0), o.in(1), dst, elements(o.shape(1)), out.shape[0],
                          last);
      break;
    case OpKind::kLayerNorm:
      emit_layer_norm(cg, name, o.in(0), o.in(1), o.in(2), dst, size / last, last, a.eps);
      break;
    case OpKind::kLayerNormGrad:
      emit_layer_norm_grad(cg, name, o.in(0), o.in(1), o.in(2), dst, size / last, last, a.eps);
      break;
    case OpKind::kLayerNormGainGrad:
      emit_layer_norm_gain_grad(cg, scratch, name, o.in(0), o.in(1), dst,
                                elements(o.shape(0)) / last, last, a.eps);
      break;
    case OpKind::kSoftmax: {
      const int64_t rows = out.shape.size() >= 2 ? out.shape[out.shape.size() - 2] : 1;
      emit_softmax(cg, name, o.in(0), dst, size / (rows * last), rows, last, a.causal);
      break;
    }
    case OpKind::kSoftmaxGrad:
      emit_softmax_grad(cg, name, o.in(0), o.in(1), dst, size / last, last);
      break;
    case OpKind::kGelu:
      emit_gelu(cg, name, o.in(0), dst, size);
      break;
    case OpKind::kGeluGrad:
      emit_gelu_grad(cg, name, o.in(0), o.in(1), dst, size);
      break;
    case OpKind::kScale:
      emit_scale(cg, name, o.in(0), dst, size, a.scale);
      break;
    case OpKind::kMul: {
      const int64_t row = elements(o.shape(1));
      const bool broadcast = row != size;
      emit_binary(cg, name, isa::Opcode::VMULF, o.in(0), o.in(1), dst,
                  broadcast ? size / row : size, broadcast ? row : 1, broadcast);
      break;
    }
    case OpKind::kDropout:
      emit_dropout(cg, name, o.in(0), dst, size, a.rate, a.seed);
      break;
    case OpKind::kBatchMatMul:
      lower_batch_matmul(p, cg, scratch, n);
      break;
    case OpKind::kPermute:
      if (std::is_sorted(a.perm.begin(), a.perm.end()))  // the identity
        emit_copy(cg, name, o.in(0), dst, size);
      else
        emit_permute(cg, name, o.in(0), dst, o.shape(0), a.perm);
      break;
    case OpKind::kSelect:
      emit_copy(cg, name, o.in(0) + a.index * size, dst, size);
      break;
    case OpKind::kSelectGrad: {
      const int64_t part = elements(o.shape(0));
      const int64_t after = (a.index + 1) * part;
      if (a.index > 0) emit_zero_hbm(cg, dst, a.index * part);
      if (after < size) emit_zero_hbm(cg, dst + after, size - after);
      emit_copy(cg, name, o.in(0), dst + a.index * part, part);
      break;
    }
    default:
      return false;
  }
  p.scratch_words = scratch.peak;
  cg.em().roll_since(first);  // the row kernels' groups, the DMA runs, the batches' GEMMs
  return true;
}

}  // namespace tessera::compiler
