// The batch-normalisation cases of pass lower (graph/batch_norm.h): x [..., C] as R rows of C
// channels, the per-channel vectors [C]; the host's arithmetic (graph/batch_norm_kernels.h):
//   batch_norm, batch_norm_grad    one streamed pass on the vector unit, the [C] vectors loaded
//                                  once as the repeating pattern of their rows (StreamIn::pattern)
//   channel_squares, channel_dot   reduce_rows' sums (a partial sum per sublane, then their tree)
//                                  of a centred term per element (kernels.h emit_channel_sum)
#include "compiler/kernels.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

bool lower_batch_norm_op(Pipeline& p, Codegen& cg, const graph::Node& n) {
  using graph::OpKind;
  using isa::Opcode;
  const NodeOperands o(p, n);
  const std::string& name = o.out.name;
  const int64_t C = o.shape(0).back();  // every op's first input is [..., C]
  const int64_t R = graph::num_elements(o.shape(0)) / C;
  const auto vector = [&](size_t i) { return StreamIn{o.in(i), true, true}; };
  const int64_t first = cg.em().size();
  switch (n.op) {
    case OpKind::kBatchNorm:  // x, mean, inv_sd, gamma, beta
      emit_stream(cg, name, R, C, {{o.in(0)}, vector(1), vector(2), vector(3), vector(4)}, {o.dst},
                  [](Codegen& c, const std::vector<int>& in) {
                    const int a = c.vreg(), t = c.vreg(), y = c.vreg();
                    c.op(Opcode::VMULF, a, in[3], in[2]);  // a = gamma * inv_sd
                    c.op(Opcode::VSUBF, t, in[0], in[1]);  // x - mean
                    c.op(Opcode::VMULF, t, t, a);
                    c.op(Opcode::VADDF, y, t, in[4]);  // + beta
                    return std::vector<int>{y};
                  });
      break;
    case OpKind::kBatchNormGrad:  // dy, x, mean, k_dy, k_x, k
      emit_stream(cg, name, R, C,
                  {{o.in(0)}, {o.in(1)}, vector(2), vector(3), vector(4), vector(5)}, {o.dst},
                  [](Codegen& c, const std::vector<int>& in) {
                    const int f = c.vreg(), t = c.vreg(), s = c.vreg(), dx = c.vreg();
                    c.op(Opcode::VMULF, f, in[0], in[3]);  // dy * k_dy
                    c.op(Opcode::VSUBF, t, in[1], in[2]);  // x - mean
                    c.op(Opcode::VMULF, t, t, in[4]);      // * k_x
                    c.op(Opcode::VADDF, s, f, t);
                    c.op(Opcode::VADDF, dx, s, in[5]);  // + k
                    return std::vector<int>{dx};
                  });
      break;
    case OpKind::kChannelSquares:  // x, mean
      emit_channel_sum(cg, name, o.in(0), -1, o.in(1), o.dst, R, C);
      break;
    case OpKind::kChannelDot:  // u, x, mean
      emit_channel_sum(cg, name, o.in(1), o.in(0), o.in(2), o.dst, R, C);
      break;
    default:
      return false;
  }
  cg.em().roll_since(first);
  return true;
}

}  // namespace tessera::compiler
