// The convolution and pooling cases of pass lower: geometry from the node's shapes and
// attributes (as the host executor's), then the kernels of kernels_conv.h.
#include "compiler/kernels_conv.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

namespace {

int dim(const graph::Shape& s, size_t i) {
  return static_cast<int>(s.at(i));
}

ConvGeom conv_geom(const graph::Shape& x, const graph::Shape& w, const graph::Shape& y,
                   const graph::Attrs& a) {
  return {dim(x, 0), dim(x, 1), dim(x, 2), dim(x, 3), dim(w, 0), dim(w, 1),
          dim(w, 3), a.stride,  a.pad,     dim(y, 1), dim(y, 2)};
}

ConvGeom pool_geom(const graph::Shape& x, const graph::Shape& y, const graph::Attrs& a) {
  return {dim(x, 0), dim(x, 1), dim(x, 2), dim(x, 3), a.kernel, a.kernel,
          dim(x, 3), a.stride,  0,         dim(y, 1), dim(y, 2)};
}

}  // namespace

bool lower_conv_op(Pipeline& p, Codegen& cg, const graph::Node& n) {
  const graph::Graph& g = p.graph;
  const graph::Value& out = g.value(n.output);
  auto shape = [&](size_t i) -> const graph::Shape& { return g.value(n.inputs.at(i)).shape; };
  auto in = [&](size_t i) { return p.hbm.at(n.inputs.at(i)); };
  const int64_t dst = p.hbm.at(n.output);
  HbmScratch scratch{p.out.stats.hbm_words, p.spec->hbm_bytes / 4, p.scratch_words};
  CompileStats& stats = p.out.stats;
  const int64_t first = cg.em().size();
  switch (n.op) {
    case graph::OpKind::kConv2D:
      emit_conv2d(cg, stats, scratch, out.name, in(0), in(1), dst,
                  conv_geom(shape(0), shape(1), out.shape, n.attrs));
      break;
    case graph::OpKind::kConv2DInputGrad:
      emit_conv2d_input_grad(cg, stats, scratch, out.name, in(0), in(1), dst,
                             conv_geom(out.shape, shape(1), shape(0), n.attrs));
      break;
    case graph::OpKind::kConv2DWeightGrad:
      emit_conv2d_weight_grad(cg, stats, scratch, out.name, in(0), in(1), dst,
                              conv_geom(shape(0), out.shape, shape(1), n.attrs));
      break;
    case graph::OpKind::kMaxPool2D:
      emit_maxpool2d(cg, out.name, in(0), dst, pool_geom(shape(0), out.shape, n.attrs));
      break;
    case graph::OpKind::kMaxPool2DGrad:
      emit_maxpool2d_grad(cg, out.name, in(0), in(1), dst, pool_geom(shape(1), shape(0), n.attrs));
      break;
    default:
      return false;
  }
  p.scratch_words = scratch.peak;
  cg.em().roll_since(first);  // the vector-unit code of pooling and the straight DMA stretches
  return true;
}

}  // namespace tessera::compiler
