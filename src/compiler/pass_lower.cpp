// Pass lower: one kernel per graph node, in graph order, then the optimizer update per parameter,
// into one instruction stream (the Codegen's list scheduler packs it into bundles).
//   matmul                GEMM program from kernels/gemm (weight double buffering, DMA prefetch,
//                         K chained in the accumulators: numerics::mxu_matmul_accumulate order)
//   transpose             element-strided DMAs (the backward matmuls' transposed operands)
//   add / relu / relu_grad / ones_like   streamed vector-unit kernels
//   reduce_rows           column sum (vector unit + sublane tree)
//   softmax_cross_entropy(_grad)         RPU + EUP row kernel (blocked rows past the lanes)
//   optimizer             SGD with momentum, Adam or Adagrad, in place on parameters and state;
//                         Adam on the Adam unit by default (lower_adam_unit.cpp), after a
//                         barrier; a sparse table's update is the sparse core's
//   embedding_bag(_grad)  the sparse core's hand-offs (lower_sparse_step.cpp); embedding(_grad)
//                         too with CompileOptions::embedding_on kSparseCore
//   conv2d(_input_grad, _weight_grad), maxpool2d(_grad)   kernels_conv.h (GEMMs on implicit or
//   transposed im2col; vector unit)
//   reshape               nothing: plan-hbm gives the output its input's address (an alias)
//   the transformer ops   lower_transformer.cpp (row kernels, EUP, RNG unit, batched GEMMs)
//   exp .. erf, broadcast, sum_to, slice(_grad), concat, pad, reduce_max(_grad)
//                         lower_math_views.cpp (EUP and vector unit; strided DMAs)
// Other ops are an Error naming the op and the node.
#include <algorithm>
#include <cstring>
#include <map>

#include "common/error.h"
#include "compiler/hbm_roles.h"
#include "compiler/kernels.h"
#include "compiler/kernels_adagrad.h"
#include "compiler/kernels_conv.h"
#include "compiler/kernels_pointwise.h"
#include "compiler/kernels_rows.h"
#include "compiler/lower_adam_unit.h"
#include "compiler/mxu_regions.h"
#include "compiler/pipeline.h"
#include "graph/ops.h"
#include "kernels/gemm.h"
#include "numerics/optimizer.h"

namespace tessera::compiler {

using graph::OpKind;

namespace {

int64_t count(const graph::Value& v) {
  return std::max<int64_t>(1, graph::num_elements(v.shape));
}

void lower_matmul(Pipeline& p, Codegen& cg, const graph::Node& n) {
  const graph::Graph& g = p.graph;
  const graph::Value& a = g.value(n.inputs[0]);
  const graph::Value& b = g.value(n.inputs[1]);
  emit_gemm(cg, p.out.stats, g.value(n.output).name, p.hbm.at(a.id), p.hbm.at(b.id),
            p.hbm.at(n.output), static_cast<int>(a.shape[0]), static_cast<int>(a.shape[1]),
            static_cast<int>(b.shape[1]));
}

// Softmax cross-entropy: rows of at most one vector row on the RPU row kernel (kernels.h), wider
// ones (a byte vocabulary) on the blocked row kernel (kernels_rows.h).
void emit_xent(Codegen& cg, const std::string& name, int64_t logits, int64_t labels, int64_t loss,
               int64_t grad, int64_t batch, int64_t classes) {
  if (classes > cg.spec().lanes)
    emit_softmax_xent_rows(cg, name, logits, labels, loss, grad, batch, classes);
  else
    emit_softmax_xent(cg, name, logits, labels, loss, grad, batch, classes);
}

}  // namespace

void lower_node(Pipeline& p, Codegen& cg, const graph::Node& n) {
  const graph::Graph& g = p.graph;
  const graph::Value& out = g.value(n.output);
  const std::string& name = out.name;
  auto in = [&](int i) { return p.hbm.at(n.inputs[static_cast<size_t>(i)]); };
  auto in_v = [&](int i) -> const graph::Value& {
    return g.value(n.inputs[static_cast<size_t>(i)]);
  };
  const int64_t dst = p.hbm.at(n.output);
  switch (n.op) {
    case OpKind::kMatMul:
      lower_matmul(p, cg, n);
      return;
    case OpKind::kAdd: {
      const bool broadcast = in_v(1).shape != in_v(0).shape;
      const int64_t row = count(in_v(1));
      emit_add(cg, name, in(0), in(1), dst, broadcast ? count(out) / row : count(out),
               broadcast ? row : 1, broadcast);
      return;
    }
    case OpKind::kRelu:
      emit_relu(cg, name, in(0), dst, count(out));
      return;
    case OpKind::kReluGrad:
      emit_relu_grad(cg, name, in(0), in(1), dst, count(out));
      return;
    case OpKind::kTranspose:
      emit_transpose(cg, name, in(0), dst, in_v(0).shape[0], in_v(0).shape[1]);
      return;
    case OpKind::kReduceRows: {
      const int64_t cols = out.shape[0];
      emit_reduce_rows(cg, name, in(0), dst, count(in_v(0)) / cols, cols);
      return;
    }
    case OpKind::kSoftmaxCrossEntropy:
      emit_xent(cg, name, in(0), in(1), dst, -1, in_v(0).shape[0], in_v(0).shape[1]);
      return;
    case OpKind::kSoftmaxCrossEntropyGrad: {
      const graph::Value& seed = in_v(2);
      if (seed.producer < 0 || g.node(seed.producer).op != OpKind::kOnesLike)
        throw Error("compiler", "softmax_cross_entropy_grad '" + name +
                                    "': the loss seed must be ones_like(loss)");
      emit_xent(cg, name, in(0), in(1), -1, dst, in_v(0).shape[0], in_v(0).shape[1]);
      return;
    }
    case OpKind::kOnesLike:
      emit_stream(cg, name, count(out), 1, {}, {dst}, [](Codegen& c, const std::vector<int>&) {
        const int r = c.vreg();
        c.op(isa::Opcode::VBCASTI, r, 0, 0, 0, 0x3f800000);
        return std::vector<int>{r};
      });
      return;
    case OpKind::kReshape:  // an alias (plan-hbm) unless its output's address was fixed: then a
                            // copy
      if (dst != in(0)) emit_copy(cg, name, in(0), dst, count(out));
      return;
    default:
      if (lower_sparse_op(p, cg, n) || lower_conv_op(p, cg, n) || lower_transformer_op(p, cg, n) ||
          lower_math_view_op(p, cg, n) || lower_batch_norm_op(p, cg, n))
        return;
      throw Error("compiler", "op '" + std::string(graph::op_name(n.op)) + "' (node '" + name +
                                  "') is not supported by the tensor-core lowering yet");
  }
}

namespace {

// Rolls the kernel emitted from bundle `first` on: kernels longer than this many bundles have
// their periodic stretches rolled into loops (Emitter::roll_since); shorter ones stay straight
// (no taken-branch cycles), unless the program is rolled nested (it does not fit otherwise).
void roll_if_long(Codegen& cg, int64_t first) {
  const int64_t roll_above = cg.em().nested_rolling() ? 64 : 2048;
  if (cg.em().size() - first > roll_above) cg.em().roll_since(first);
}

}  // namespace

void lower_node_rolled(Pipeline& p, Codegen& cg, const graph::Node& n) {
  const int64_t first = cg.em().size();
  lower_node(p, cg, n);
  roll_if_long(cg, first);
}

namespace {

void lower_optimizer(Pipeline& p, Codegen& cg) {
  const graph::OptimizerConfig& o = p.options.optimizer;
  const size_t np = p.params.size();
  if (o.kind == graph::OptimizerKind::kAdam && p.out.adam_unit.used) {
    emit_adam_unit_start(cg, p.out.adam_unit);
    ++p.out.stats.kernels;
    return;
  }
  for (size_t i = 0; i < np; ++i) {
    const HbmTensor& t = p.out.params[i];
    const int64_t grad = p.hbm.at(p.grads[i]);
    if (p.out.sparse.used && p.out.sparse.plan.dense_grad < 0 &&
        static_cast<int>(i) == p.out.sparse.param)
      continue;  // the sparse core updates the table
    const int64_t first = cg.em().size();
    if (o.kind == graph::OptimizerKind::kAdagrad) {
      emit_adagrad(cg, "adagrad." + t.name, t.hbm, p.out.state[i].hbm, grad, t.words,
                   static_cast<float>(o.eps), p.out.scalars.hbm);
    } else if (o.kind == graph::OptimizerKind::kSgd) {
      const auto c = numerics::sgd_constants(o.lr, o.momentum);
      emit_sgd(cg, "sgd." + t.name, t.hbm, p.out.state[i].hbm, grad, t.words, c.lr, c.mu);
    } else {
      const auto c = numerics::adam_constants(o.beta1, o.beta2, o.eps);
      emit_adam(cg, "adam." + t.name, t.hbm, p.out.state[i].hbm, p.out.state[np + i].hbm, grad,
                t.words, c.b1, c.b2, c.eps, c.omb1, c.omb2, p.out.scalars.hbm);
    }
    roll_if_long(cg, first);
    ++p.out.stats.kernels;
  }
}

// Index in the final program (empty bundles dropped: Emitter::finish) of emitter bundle `at`.
int64_t nonempty_bundles(const std::vector<isa::Bundle>& bundles, int64_t at) {
  return std::count_if(bundles.begin(), bundles.begin() + at,
                       [](const isa::Bundle& b) { return b != isa::Bundle{}; });
}

// Lowers the graph into p.out, rolling kernels one level deep, or nested with `nested`; false
// (p.out partly written) when the one-level program does not fit instruction memory.
bool lower_program(Pipeline& p, bool nested) {
  Codegen cg(*p.spec);
  cg.em().set_nested_rolling(nested);
  std::vector<int64_t> kernel_at;  // emitter bundle of each node's first (hbm_roles.h)
  // kernel_barriers: from the node after the first gradient's producer on (the backward pass,
  // where gradient buckets can be ready); the forward kernels keep their overlap.
  int first_grad = static_cast<int>(p.graph.nodes().size());
  for (int g : p.grads) first_grad = std::min(first_grad, p.graph.value(g).producer);
  for (const graph::Node& n : p.graph.nodes()) {
    if (p.options.kernel_barriers && n.id > first_grad) cg.em().barrier();
    const int64_t first = cg.em().size();
    kernel_at.push_back(first);
    lower_node_rolled(p, cg, n);
    ++p.out.stats.kernels;
    if (const std::optional<MxuRole> role = mxu_role(p.graph, n))  // emitter bundles until finish()
      p.out.mxu_regions.push_back(
          MxuRegion{first, cg.em().size(), p.graph.value(n.output).name, *role});
  }
  kernel_at.push_back(cg.em().size());
  int64_t optimizer_at = -1;
  if (p.options.training) {
    cg.wait_dmas();
    cg.em().barrier();
    optimizer_at = cg.em().size();
    lower_sparse_optimizer_wait(p, cg);
    lower_optimizer(p, cg);
  }
  if (!nested && !cg.fits_imem()) return false;
  p.out.program = cg.finish();
  if (optimizer_at >= 0)
    p.out.optimizer_first_bundle = nonempty_bundles(cg.em().bundles(), optimizer_at);
  for (MxuRegion& r : p.out.mxu_regions) {
    r.first_pc = nonempty_bundles(cg.em().bundles(), r.first_pc);
    r.end_pc = nonempty_bundles(cg.em().bundles(), r.end_pc);
  }
  const std::vector<isa::Bundle>& emitted = cg.em().bundles();
  int64_t at = 0, kept = 0;
  for (int64_t& k : kernel_at) {  // ascending: one pass
    for (; at < k; ++at) kept += emitted[static_cast<size_t>(at)] != isa::Bundle{} ? 1 : 0;
    k = kept;
  }
  p.out.hbm_roles = hbm_roles(p, kernel_at, static_cast<int64_t>(p.out.program.code.size()));
  for (size_t i = 0; i + 1 < kernel_at.size(); ++i)
    if (kernel_at[i + 1] > kernel_at[i])
      p.out.kernel_regions.push_back(
          {kernel_at[i], kernel_at[i + 1], std::string(graph::op_name(p.graph.nodes()[i].op))});
  if (p.options.kernel_barriers && p.options.training) {
    p.out.kernel_first = kernel_at;
    // After its producer and every node that reads it (the bucket's reduced sum overwrites it).
    std::map<int, int> last_use;
    for (int g : p.grads) last_use[g] = p.graph.value(g).producer;
    for (const graph::Node& n : p.graph.nodes())
      for (int in : n.inputs)
        if (auto it = last_use.find(in); it != last_use.end())
          it->second = std::max(it->second, n.id);
    for (int g : p.grads) p.out.grad_kernel.push_back(last_use.at(g));
  }
  if (p.out.adam_unit.used && p.options.training)
    for (isa::DataSegment& d : adam_unit_segments(p.out.adam_unit, p.options.optimizer))
      p.out.program.data.push_back(std::move(d));
  p.out.program.data.push_back(
      isa::DataSegment{isa::Space::Hbm, static_cast<uint64_t>(p.ones_hbm), {0x3f800000u}});
  const std::vector<int> constants = p.graph.constants();
  for (size_t i = 0; i < constants.size(); ++i) {
    const std::vector<float>& values = *p.graph.value(constants[i]).data;
    std::vector<uint32_t> words(values.size());
    std::memcpy(words.data(), values.data(), 4 * values.size());
    p.out.program.data.push_back(isa::DataSegment{
        isa::Space::Hbm, static_cast<uint64_t>(p.out.constants[i].hbm), std::move(words)});
  }
  p.out.stats.bundles = static_cast<int64_t>(p.out.program.code.size());
  p.out.stats.hbm_words += p.scratch_words;
  p.out.stats.smem_words = cg.next_smem();
  p.out.stats.vmem_peak_rows = cg.vmem_peak_rows();
  return true;
}

}  // namespace

void pass_lower(Pipeline& p) {
  const CompiledProgram before = p.out;
  const int64_t scratch = p.scratch_words;
  if (lower_program(p, false)) return;
  p.out = before;
  p.scratch_words = scratch;
  lower_program(p, true);
}

}  // namespace tessera::compiler
