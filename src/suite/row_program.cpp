#include "suite/row_program.h"

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/pipeline.h"

namespace tessera::suite {

namespace {

constexpr int64_t kAlignWords = 1024;

}  // namespace

RowProgram row_program(const graph::Graph& g, const core::CoreSpec& spec) {
  RowProgram r;
  int64_t at = 0;
  for (const graph::Value& v : g.values()) {
    if (v.producer >= 0 && g.node(v.producer).op == graph::OpKind::kReshape) {
      r.hbm[v.id] = r.hbm.at(g.node(v.producer).inputs.at(0));
      continue;
    }
    r.hbm[v.id] = at;
    at += ceil_div(graph::num_elements(v.shape), kAlignWords) * kAlignWords;
  }
  const int64_t limit = spec.hbm_bytes / 4;
  if (at > limit)
    throw Error("suite", "the row's tensors need " + std::to_string(at * 4) +
                             " bytes of HBM; the core has " + std::to_string(limit * 4));
  compiler::Pipeline p;
  p.spec = &spec;
  p.options.training = false;
  p.graph = g;
  p.hbm = r.hbm;
  p.out.stats.hbm_words = at;  // the kernels' scratch starts here
  // One-level rolling first; a program that does not fit instruction memory is lowered again with
  // nested rolling and pass lower's rolling of long kernels.
  for (const bool nested : {false, true}) {
    compiler::Codegen cg(spec);
    cg.em().set_nested_rolling(nested);
    p.scratch_words = 0;
    for (const graph::Node& n : g.nodes())
      nested ? compiler::lower_node_rolled(p, cg, n) : compiler::lower_node(p, cg, n);
    if (!nested && !cg.fits_imem()) continue;
    r.program = cg.finish();
    break;
  }
  r.hbm_words = at + p.scratch_words;
  return r;
}

}  // namespace tessera::suite
