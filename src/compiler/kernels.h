// Vector-unit kernels of the compiled program: each reads its operands from HBM, computes in
// vector memory and writes its results back to HBM (so kernels compose in any order; the only
// state between them is HBM). Tensors are row-major fp32 (labels int32) at HBM word addresses.
// Tiles: a kernel processes its tensors in chunks of whole rows sized to the configured vector
// memory; a tensor whose single row (or vreg) cannot fit is an Error naming it and the sizes.
// Every arithmetic step follows graph/kernels (chip numerics) and numerics/ exactly.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/codegen.h"

namespace tessera::compiler {

// The bits of an fp32 value, as a VBCASTI immediate.
inline int32_t bits(float f) {
  return std::bit_cast<int32_t>(f);
}

// A streamed input: flat, or one row of `row_len` elements repeated for every row (a bias).
struct StreamIn {
  int64_t hbm = 0;
  bool row_broadcast = false;  // a [row_len] vector repeated for every row
  // With row_broadcast: when the rows' repetition of the vector spans few vregs (row_len divides
  // or is a multiple of a vreg's words), those vregs are DMA'd once per kernel and loaded from
  // there, instead of the vector being repeated into every chunk (HBM traffic per element).
  bool pattern = false;
};
// Computes the output vregs from the input vregs of one vreg position.
using StreamBody = std::function<std::vector<int>(Codegen&, const std::vector<int>&)>;

// Element-wise over a [rows, row_len] tensor; outputs may alias inputs (in-place updates).
// `setup` emits the kernel's constants (v0..v7) once per chunk; the top `reserved_top` rows of
// vector memory are left alone.
void emit_stream(Codegen& cg, const std::string& tensor, int64_t rows, int64_t row_len,
                 const std::vector<StreamIn>& ins, const std::vector<int64_t>& outs,
                 const StreamBody& body, const std::function<void(Codegen&)>& setup = {},
                 int64_t reserved_top = 0);

// out = a `op` b (a vector-unit fp32 opcode) over [rows, row_len]; with `broadcast` b is one row
// of row_len repeated for every row, else as long as a.
void emit_binary(Codegen& cg, const std::string& name, isa::Opcode op, int64_t a, int64_t b,
                 int64_t out, int64_t rows, int64_t row_len, bool broadcast);
void emit_add(Codegen& cg, const std::string& name, int64_t a, int64_t b, int64_t out, int64_t rows,
              int64_t row_len, bool broadcast);
void emit_relu(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t n);
void emit_relu_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t out,
                    int64_t n);

// x [rows, cols] -> out [cols, rows] through vector memory and the transpose unit
// (kernels_transpose.cpp).
void emit_transpose(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t rows,
                    int64_t cols);

// The [rows, cols] matrix at vector-memory row `in_row` (its rows contiguous: row r, column block
// j at row in_row + r * cols / L + j) transposed into the [cols, rows] matrix at `out_row` (row c,
// block i at out_row + c * rows / L + i) on the transpose unit, with rows and cols multiples of the
// lanes L and an XU FIFO that holds a whole block (see emit_transpose). The L x L blocks are two
// counted loops, so the code does not grow with the matrix (kernels_transpose.cpp).
void emit_transpose_in_vmem(Codegen& cg, int64_t in_row, int64_t out_row, int64_t rows,
                            int64_t cols);
// Whether emit_transpose_in_vmem can transpose a [rows, cols] matrix on this core.
bool transposes_in_vmem(const core::CoreSpec& spec, int64_t rows, int64_t cols);

// out[c] = numerics::column_sum over the rows (sublanes = the core's).
void emit_reduce_rows(Codegen& cg, const std::string& name, int64_t x, int64_t out, int64_t rows,
                      int64_t cols);
// The same sums of a term per element: (x - centre[c])^2 (u < 0), or u * (x - centre[c]) with u
// [rows, cols] in HBM (batch normalisation's channel_squares and channel_dot).
void emit_channel_sum(Codegen& cg, const std::string& name, int64_t x, int64_t u, int64_t centre,
                      int64_t out, int64_t rows, int64_t cols);

// Sublane 0 of the result = tree_sum over the S sublanes of `acc` (per lane). Uses rows
// [tmp, tmp + 2S) of vector memory; s29 must hold 2.
int sublane_tree_sum(Codegen& cg, int acc, int64_t tmp);

// Softmax cross-entropy (graph/kernels.cpp chip numerics): loss[] = mean over the batch; or the
// gradient (softmax - onehot) * f32(1/B) (the seed d loss is 1) into grad [B, C]. At most `lanes`
// classes (emit_softmax_xent_rows in kernels_rows.h takes any count).
void emit_softmax_xent(Codegen& cg, const std::string& name, int64_t logits, int64_t labels,
                       int64_t loss, int64_t grad, int64_t batch, int64_t classes);

// Where straight-line vector code goes: fresh() names the register of each new value, op() takes
// each instruction in program order (fields as in Codegen::op). scheduled(cg): the Codegen's
// rotating register pool and its list scheduler.
struct VectorCode {
  std::function<int()> fresh;
  std::function<void(isa::Opcode, int d, int a, int b, int c)> op;
};
VectorCode scheduled(Codegen& cg);

// IEEE fp32 a / b (correctly rounded) on the vector unit and the EUP, by Markstein's theorem: with
// y = eup_rcp(b) (correctly rounded), q0 = a * y, r = fma(-q0, b, a) (exact), q = fma(r, y, q0)
// is RN(a / b) for normal results. `rcp_b` is a register already holding y, or -1. Returns q.
// New values in the order y (when rcp_b < 0), q0, -q0, r, q.
int emit_divide(const VectorCode& out, int a, int b, int rcp_b);

// The Adam update of one vector register of elements, bit for bit numerics/adam.h: from theta, m,
// v and the gradient g, m' = b1 m + (1-b1) g, v' = b2 v + ((1-b2) g) g, denom = sqrt(v') /
// sqrt_bc2 + eps, theta' = theta + (-step) (m' / denom) (sqrt on the EUP, both divisions by
// emit_divide). `k` names the registers of the broadcast constants. New values in the order
// b1 m, (1-b1) g, m', b2 v, (1-b2) g, ((1-b2) g) g, v', sqrt(v'), denom, (-step) ratio, theta',
// then those of the two divisions. `moments(m', v')` is called as soon as both are computed (the
// pipelined program stores them there). The compiler's stream kernel (emit_adam) and the pipelined
// vector-unit program (adam_programs.h) both emit their update here.
struct AdamConstRegs {
  int b1, b2, omb1, omb2, eps, neg_step, rcp_sqrt_bc2, sqrt_bc2;
};
struct AdamUpdate {
  int theta, m, v;
};
AdamUpdate emit_adam_update(const VectorCode& out, const AdamConstRegs& k, int theta, int m, int v,
                            int g, const std::function<void(int, int)>& moments = {});

// Optimizer updates in place (numerics/optimizer.h); Adam's per-step scalars {step_f,
// sqrt_bc2_f} are two fp32 words at `scalars` (written by the host before each step).
void emit_sgd(Codegen& cg, const std::string& name, int64_t theta, int64_t vel, int64_t grad,
              int64_t n, float lr, float mu);
void emit_adam(Codegen& cg, const std::string& name, int64_t theta, int64_t m, int64_t v,
               int64_t grad, int64_t n, float b1, float b2, float eps, float omb1, float omb2,
               int64_t scalars);

}  // namespace tessera::compiler
