#include "suite/row_program.h"

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels_conv.h"

namespace tessera::suite {

namespace {

constexpr int64_t kAlignWords = 1024;

int dim(const graph::Shape& s, size_t i) {
  return static_cast<int>(s.at(i));
}

void emit_node(compiler::Codegen& cg, compiler::HbmScratch& scratch, const graph::Graph& g,
               const graph::Node& n, const std::map<int, int64_t>& hbm) {
  compiler::CompileStats stats;
  const graph::Value& out = g.value(n.output);
  const graph::Shape& a = g.value(n.inputs.at(0)).shape;
  const graph::Shape& b = g.value(n.inputs.at(1)).shape;
  const int64_t in0 = hbm.at(n.inputs[0]), in1 = hbm.at(n.inputs[1]), dst = hbm.at(n.output);
  switch (n.op) {
    case graph::OpKind::kMatMul:
      compiler::emit_gemm(cg, stats, out.name, in0, in1, dst, dim(a, 0), dim(a, 1), dim(b, 1));
      return;
    case graph::OpKind::kConv2D: {
      const int64_t first = cg.em().size();
      const graph::kernels::ConvGeom geom{
          dim(a, 0), dim(a, 1),      dim(a, 2),   dim(a, 3),         dim(b, 0),        dim(b, 1),
          dim(b, 3), n.attrs.stride, n.attrs.pad, dim(out.shape, 1), dim(out.shape, 2)};
      compiler::emit_conv2d(cg, stats, scratch, out.name, in0, in1, dst, geom);
      cg.em().roll_since(first);
      return;
    }
    default:
      throw Error("suite", "op '" + std::string(graph::op_name(n.op)) + "' (node '" + out.name +
                               "') has no kernel in the suite's lowering");
  }
}

}  // namespace

RowProgram row_program(const graph::Graph& g, const core::CoreSpec& spec) {
  RowProgram r;
  int64_t at = 0;
  for (const graph::Value& v : g.values()) {
    r.hbm[v.id] = at;
    at += ceil_div(graph::num_elements(v.shape), kAlignWords) * kAlignWords;
  }
  const int64_t limit = spec.hbm_bytes / 4;
  if (at > limit)
    throw Error("suite", "the row's tensors need " + std::to_string(at * 4) +
                             " bytes of HBM; the core has " + std::to_string(limit * 4));
  compiler::Codegen cg(spec);
  compiler::HbmScratch scratch{at, limit, 0};
  for (const graph::Node& n : g.nodes()) emit_node(cg, scratch, g, n, r.hbm);
  r.program = cg.finish();
  r.hbm_words = at + scratch.peak;
  return r;
}

}  // namespace tessera::suite
