// The element-wise math and view cases of pass lower: shapes and attributes as the host executor
// reads them (graph/executor.cpp), then the kernels of kernels_unary.h and kernels_strided.h:
//   exp, log, sqrt, reciprocal, sigmoid, tanh, erf   streamed EUP / vector-unit kernels
//   broadcast, slice                                 gathering DMAs (stride 0 repeats)
//   slice_grad                                       zeroing, then scattering DMAs
//   concat                                           each operand scattered into its part
//   sum_to                                           sequential sums on the vector unit
//   reduce_max, reduce_max_grad                      sequential max, first-max selection
//                                                    (kernels_reduce_max.h)
#include "compiler/kernels.h"
#include "compiler/kernels_reduce_max.h"
#include "compiler/kernels_strided.h"
#include "compiler/kernels_unary.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

namespace {

// x's strides with those of its slice (starts, steps) per dim, and the slice's first element.
StridedView slice_view(int64_t x, const graph::Shape& x_shape, const graph::Attrs& a) {
  StridedView v{x, a.shape, dense_strides(x_shape)};
  for (size_t d = 0; d < x_shape.size(); ++d) {
    v.base += a.starts[d] * v.strides[d];
    v.strides[d] *= a.steps[d];
  }
  return v;
}

}  // namespace

bool lower_math_view_op(Pipeline& p, Codegen& cg, const graph::Node& n) {
  using graph::OpKind;
  const NodeOperands o(p, n);
  const graph::Value& out = o.out;
  const std::string& name = out.name;
  const graph::Attrs& a = n.attrs;
  const int64_t dst = o.dst;
  const int64_t size = std::max<int64_t>(1, graph::num_elements(out.shape));
  HbmScratch scratch{p.out.stats.hbm_words, p.spec->hbm_bytes / 4, p.scratch_words};
  const int64_t first = cg.em().size();
  switch (n.op) {
    case OpKind::kBroadcast: {  // x's dims right-aligned to the target's; a dim of 1 repeats
      const graph::Shape& xs = o.shape(0);
      const std::vector<int64_t> dense = dense_strides(xs);
      StridedView v{o.in(0), a.shape, std::vector<int64_t>(a.shape.size(), 0)};
      const size_t off = a.shape.size() - xs.size();
      for (size_t d = 0; d < xs.size(); ++d)
        if (xs[d] != 1) v.strides[off + d] = dense[d];
      emit_gather(cg, name, v, dst);
      break;
    }
    case OpKind::kSumTo:
      emit_sum_to(cg, scratch, name, o.in(0), o.shape(0), a.shape, dst);
      break;
    case OpKind::kReduceMax:
      emit_reduce_max(cg, scratch, name, o.in(0), o.shape(0), a.shape, dst);
      break;
    case OpKind::kReduceMaxGrad:  // dy, x, y
      emit_reduce_max_grad(cg, scratch, name, o.in(0), o.in(1), o.in(2), dst, o.shape(1),
                           o.shape(0));
      break;
    case OpKind::kSlice:
      emit_gather(cg, name, slice_view(o.in(0), o.shape(0), a), dst);
      break;
    case OpKind::kSliceGrad:
      emit_zero_hbm(cg, dst, size);
      emit_scatter(cg, name, o.in(0), slice_view(dst, a.x_shape, a));
      break;
    case OpKind::kPad: {  // the fill (rounded to f32, as the host's chip numerics) everywhere,
                          // then x scattered to its offsets
      emit_fill_hbm(cg, dst, size, bits(static_cast<float>(a.fill)));
      StridedView v{dst, o.shape(0), dense_strides(out.shape)};
      for (size_t d = 0; d < v.shape.size(); ++d) v.base += a.starts[d] * v.strides[d];
      emit_scatter(cg, name, o.in(0), v);
      break;
    }
    case OpKind::kConcat: {
      const std::vector<int64_t> strides = dense_strides(out.shape);
      const auto axis = static_cast<size_t>(a.axis);
      emit_scatter(cg, name + ".a", o.in(0), StridedView{dst, o.shape(0), strides});
      emit_scatter(cg, name + ".b", o.in(1),
                   StridedView{dst + o.shape(0)[axis] * strides[axis], o.shape(1), strides});
      break;
    }
    default:  // exp, log, sqrt, reciprocal, sigmoid, tanh, erf
      if (!graph::is_unary_elementwise(n.op)) return false;
      emit_unary(cg, name, n.op, o.in(0), dst, size);
      break;
  }
  p.scratch_words = scratch.peak;
  cg.em().roll_since(first);  // the DMA runs, the groups of sums
  return true;
}

}  // namespace tessera::compiler
