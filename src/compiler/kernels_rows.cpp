// Row kernels (kernels_rows.h). Vector memory of one kernel, in rows of L lanes:
//   vecs      [D] operands broadcast to every row (gain, bias): block j of vector i at
//             (i * cpr + j) * S, the block repeated on every sublane (loaded once)
//   partials  per reduction q and block j the S per-row partials at (q * B + j) * S
//             (B = cpr rounded up to a power of two)
//   stats     per-row values of the current group (mean, 1/sigma, ...) at k * S, broadcast
//   ins, outs per tensor cpr blocks of R rows: block j of chunk row r at j * R + r
//   columns   per [rows] int32 tensor (labels) R rows: chunk row r's word in lane 0 of row r
// A group is S rows of a chunk. Its code runs sweeps over the blocks; values that outlive a sweep
// go through the stats rows (the rotating register pool holds short-lived values only).
// Registers: v0 = the sum padding (+0 / -0, see kernels_rows.h), v1 = -Inf, v2 = lane ids; v3..v7
// the op's constants; m1 = the valid lanes of the last block, m2 the causal mask.
#include "compiler/kernels_rows.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <vector>

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

constexpr int kPad = 0, kNegInf = 1, kLaneId = 2;
constexpr int kLastMask = 1, kCausalMask = 2;

class RowKernel {
 public:
  RowKernel(Codegen& cg, const std::string& name, int64_t rows, int64_t D, std::vector<int64_t> ins,
            std::vector<int64_t> vecs, std::vector<int64_t> outs, int stats, int reductions,
            std::vector<int64_t> columns = {})
      : m_cg(cg),
        m_rows(rows),
        m_D(D),
        m_S(cg.spec().sublanes),
        m_L(cg.spec().lanes),
        m_cpr(ceil_div(D, m_L)),
        m_B(static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(m_cpr)))),
        m_ins(std::move(ins)),
        m_vecs(std::move(vecs)),
        m_outs(std::move(outs)),
        m_columns(std::move(columns)),
        m_single(static_cast<size_t>(reductions), -1) {
    if (std::popcount(static_cast<unsigned>(m_S)) != 1 ||
        std::popcount(static_cast<unsigned>(m_L)) != 1)
      throw Error("compiler", "row kernels need power-of-two sublanes and lanes");
    m_part_base = static_cast<int64_t>(m_vecs.size()) * m_cpr * m_S;
    m_stat_base = m_part_base + reductions * m_B * m_S;
    m_io_base = m_stat_base + stats * m_S;
    const int64_t per_row = m_cpr * static_cast<int64_t>(m_ins.size() + m_outs.size()) +
                            static_cast<int64_t>(m_columns.size());
    const int64_t fit = (cg.spec().vmem_rows() - m_io_base) / per_row / m_S * m_S;
    m_R = std::min(fit, ceil_div(rows, m_S) * m_S);
    if (m_R < m_S)
      throw Error("compiler", "tensor '" + name + "': " + std::to_string(m_S) + " rows of " +
                                  std::to_string(D) + " elements x " +
                                  std::to_string(m_ins.size() + m_outs.size()) +
                                  " buffers do not fit vector memory (" +
                                  std::to_string(cg.spec().vmem_rows()) + " rows of " +
                                  std::to_string(m_L) + " words)");
  }

  int64_t blocks() const { return m_cpr; }

  // Loads the vectors, sets the common registers, then runs `group` for every S rows (its
  // argument: the group's first row in the tensor).
  void run(const std::function<void(int64_t)>& group) {
    for (size_t i = 0; i < m_vecs.size(); ++i)
      for (int64_t j = 0; j < m_cpr; ++j)
        m_cg.dma(Opcode::DMAHV2, vec_row(i, j) * m_L, m_vecs[i] + j * m_L,
                 m_cg.descriptor(m_S, width(j), 0, m_L));
    const int64_t tail = m_D - (m_cpr - 1) * m_L;
    const int64_t p = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(m_D)));
    m_cg.op(Opcode::VLANEID, kLaneId);
    const int lim = m_cg.vreg();
    m_cg.op(Opcode::VBCASTI, lim, 0, 0, 0, static_cast<int32_t>(tail));
    m_cg.op(Opcode::VCMPLTI, kLastMask, kLaneId, lim);
    const int plim = m_cg.vreg(), zero = m_cg.vreg(), negz = m_cg.vreg();
    m_cg.op(Opcode::VBCASTI, plim, 0, 0, 0, static_cast<int32_t>(std::min(p, m_L)));
    m_cg.op(Opcode::VCMPLTI, kCausalMask, kLaneId, plim);
    m_cg.op(Opcode::VBCASTI, zero, 0, 0, 0, 0);
    m_cg.op(Opcode::VBCASTI, negz, 0, 0, 0, bits(-0.0f));
    m_cg.op(Opcode::VSEL, kPad, zero, negz, kCausalMask);
    m_cg.op(Opcode::VBCASTI, kNegInf, 0, 0, 0, bits(-std::numeric_limits<float>::infinity()));
    for (int64_t r0 = 0; r0 < m_rows; r0 += m_R) {
      const int64_t nr = std::min(m_R, m_rows - r0);
      for (size_t i = 0; i < m_ins.size(); ++i)
        for (int64_t j = 0; j < m_cpr; ++j)
          m_cg.dma(Opcode::DMAHV2, io_row(i, j) * m_L, m_ins[i] + r0 * m_D + j * m_L,
                   m_cg.descriptor(nr, width(j), m_D, m_L));
      for (size_t i = 0; i < m_columns.size(); ++i)
        m_cg.dma(Opcode::DMAHV2, column_row(i) * m_L, m_columns[i] + r0,
                 m_cg.descriptor(nr, 1, 1, m_L));
      m_cg.wait_dmas();
      for (m_group = 0; m_group * m_S < nr; ++m_group) {
        // Nested rolling: every group in the same registers, so the groups roll into a loop.
        if (m_cg.em().nested_rolling()) m_cg.restart_pools();
        group(r0 + m_group * m_S);
      }
      m_cg.em().barrier();
      for (size_t o = 0; o < m_outs.size(); ++o)
        for (int64_t j = 0; j < m_cpr; ++j)
          m_cg.dma(Opcode::DMAVH2, m_outs[o] + r0 * m_D + j * m_L,
                   io_row(m_ins.size() + o, j) * m_L, m_cg.descriptor(nr, width(j), m_L, m_D));
      m_cg.wait_dmas();
    }
  }

  // Block j of input i (or of output o, as stored so far) of the current group.
  int in(size_t i, int64_t j) { return load(io_row(i, j) + m_group * m_S); }
  int out_value(size_t o, int64_t j) { return load(io_row(m_ins.size() + o, j) + m_group * m_S); }
  void out(size_t o, int64_t j, int v) { m_cg.vst(v, io_row(m_ins.size() + o, j) + m_group * m_S); }
  int vec(size_t i, int64_t j) { return load(vec_row(i, j)); }
  // Column i's word of each row of the group, on every lane (`zero`: a register of int 0).
  int column(size_t i, int zero) {
    const int v = load(column_row(i) + m_group * m_S), r = m_cg.vreg();
    m_cg.op(Opcode::RPERM, 0, v, zero);
    m_cg.op(Opcode::RPOP, r);
    return r;
  }
  int stat(int k) { return load(stat_row(k)); }
  int64_t stat_row(int k) const { return m_stat_base + k * m_S; }
  void set_stat(int k, int v) { m_cg.vst(v, stat_row(k)); }

  // v with the lanes past the row's end replaced by `pad`'s (block j).
  int valid(int v, int64_t j, int pad) {
    if (j != m_cpr - 1 || m_D % m_L == 0) return v;
    const int r = m_cg.vreg();
    m_cg.op(Opcode::VSEL, r, v, pad, kLastMask);
    return r;
  }

  // Reduction q's partial of block j: the reduce unit's `op` (RSUM or RMAX) over v's lanes.
  void reduce(int q, int64_t j, Opcode op, int v) {
    const int r = m_cg.vreg();
    m_cg.op(op, 0, v);
    m_cg.op(Opcode::RPOP, r);
    if (m_B == 1)
      m_single[static_cast<size_t>(q)] = r;
    else
      m_cg.vst(r, part_row(q, j));
  }

  // Reduction q over the whole row: its block partials combined pairwise (`op`: VADDF or
  // VMAXF), blocks past the row's end being `identity`.
  int combine(int q, Opcode op, int identity) {
    if (m_B == 1) return m_single[static_cast<size_t>(q)];
    for (int64_t j = m_cpr; j < m_B; ++j) m_cg.vst(identity, part_row(q, j));
    for (int64_t w = m_B; w > 1; w /= 2)
      for (int64_t i = 0; i < w / 2; ++i) {
        const int a = load(part_row(q, 2 * i)), b = load(part_row(q, 2 * i + 1));
        const int r = m_cg.vreg();
        m_cg.op(op, r, a, b);
        if (w == 2) return r;
        m_cg.vst(r, part_row(q, i));
      }
    return -1;  // unreachable: m_B > 1
  }

  int binary(Opcode op, int a, int b) {
    const int r = m_cg.vreg();
    m_cg.op(op, r, a, b);
    return r;
  }
  int eup(Opcode op, int a) {
    const int r = m_cg.vreg();
    m_cg.op(op, 0, a);
    m_cg.op(Opcode::EPOP, r);
    return r;
  }

 private:
  int64_t width(int64_t j) const { return std::min(m_L, m_D - j * m_L); }
  int64_t vec_row(size_t i, int64_t j) const { return (static_cast<int64_t>(i) * m_cpr + j) * m_S; }
  int64_t part_row(int q, int64_t j) const { return m_part_base + (q * m_B + j) * m_S; }
  int64_t io_row(size_t buffer, int64_t j) const {
    return m_io_base + (static_cast<int64_t>(buffer) * m_cpr + j) * m_R;
  }
  int64_t column_row(size_t i) const {
    return io_row(m_ins.size() + m_outs.size(), 0) + static_cast<int64_t>(i) * m_R;
  }
  int load(int64_t row) {
    const int v = m_cg.vreg();
    m_cg.vld(v, row);
    return v;
  }

  Codegen& m_cg;
  int64_t m_rows, m_D, m_S, m_L, m_cpr, m_B, m_R = 0;
  std::vector<int64_t> m_ins, m_vecs, m_outs, m_columns;
  std::vector<int> m_single;  // a reduction's value when the row is one block
  int64_t m_part_base = 0, m_stat_base = 0, m_io_base = 0, m_group = 0;
};

// Layer norm's constants: v3 = 1/D, v4 = eps (as the host's f32 values).
constexpr int kInvD = 3, kEps = 4;
// Stats and reductions of the normalisation (x is input 0).
constexpr int kMean = 0, kRstd = 1;

void layer_norm_constants(Codegen& cg, int64_t D, double eps) {
  cg.op(Opcode::VBCASTI, kInvD, 0, 0, 0, bits(1.0f / static_cast<float>(D)));
  cg.op(Opcode::VBCASTI, kEps, 0, 0, 0, bits(static_cast<float>(eps)));
}

// c = x - mean of block j.
int centered(RowKernel& k, int64_t j) {
  return k.binary(Opcode::VSUBF, k.in(0, j), k.stat(kMean));
}

// xhat = c * r of block j.
int normalized(RowKernel& k, int64_t j) {
  return k.binary(Opcode::VMULF, centered(k, j), k.stat(kRstd));
}

// Stats kMean and kRstd of the group: mean = sum(x) / D, r = rsqrt(sum(c * c) / D + eps).
void normalize_stats(RowKernel& k) {
  for (int64_t j = 0; j < k.blocks(); ++j)
    k.reduce(kMean, j, Opcode::RSUM, k.valid(k.in(0, j), j, kPad));
  k.set_stat(kMean, k.binary(Opcode::VMULF, k.combine(kMean, Opcode::VADDF, kPad), kInvD));
  for (int64_t j = 0; j < k.blocks(); ++j) {
    const int c = centered(k, j);
    k.reduce(kRstd, j, Opcode::RSUM, k.valid(k.binary(Opcode::VMULF, c, c), j, kPad));
  }
  const int var = k.binary(Opcode::VMULF, k.combine(kRstd, Opcode::VADDF, kPad), kInvD);
  k.set_stat(kRstd, k.eup(Opcode::ERSQRT, k.binary(Opcode::VADDF, var, kEps)));
}

}  // namespace

void emit_layer_norm(Codegen& cg, const std::string& name, int64_t x, int64_t gain, int64_t bias,
                     int64_t y, int64_t rows, int64_t D, double eps) {
  RowKernel k(cg, name, rows, D, {x}, {gain, bias}, {y}, 2, 2);
  layer_norm_constants(cg, D, eps);
  k.run([&](int64_t) {
    normalize_stats(k);
    for (int64_t j = 0; j < k.blocks(); ++j) {
      const int scaled = k.binary(Opcode::VMULF, normalized(k, j), k.vec(0, j));
      k.out(0, j, k.binary(Opcode::VADDF, scaled, k.vec(1, j)));
    }
  });
}

void emit_layer_norm_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t gain,
                          int64_t dx, int64_t rows, int64_t D, double eps) {
  constexpr int kA = 2, kB = 3;  // stats and reductions: mean of g, mean of g * xhat
  RowKernel k(cg, name, rows, D, {x, dy}, {gain}, {dx}, 4, 4);
  layer_norm_constants(cg, D, eps);
  auto g_of = [&](int64_t j) { return k.binary(Opcode::VMULF, k.in(1, j), k.vec(0, j)); };
  k.run([&](int64_t) {
    normalize_stats(k);
    for (int64_t j = 0; j < k.blocks(); ++j) {
      const int xh = normalized(k, j), g = g_of(j);
      k.reduce(kA, j, Opcode::RSUM, k.valid(g, j, kPad));
      k.reduce(kB, j, Opcode::RSUM, k.valid(k.binary(Opcode::VMULF, g, xh), j, kPad));
    }
    k.set_stat(kA, k.binary(Opcode::VMULF, k.combine(kA, Opcode::VADDF, kPad), kInvD));
    k.set_stat(kB, k.binary(Opcode::VMULF, k.combine(kB, Opcode::VADDF, kPad), kInvD));
    for (int64_t j = 0; j < k.blocks(); ++j) {
      const int xh = normalized(k, j), g = g_of(j);
      const int ga = k.binary(Opcode::VSUBF, g, k.stat(kA));
      const int t = k.binary(Opcode::VSUBF, ga, k.binary(Opcode::VMULF, xh, k.stat(kB)));
      k.out(0, j, k.binary(Opcode::VMULF, t, k.stat(kRstd)));
    }
  });
}

void emit_layer_norm_gain_grad(Codegen& cg, HbmScratch& scratch, const std::string& name,
                               int64_t dy, int64_t x, int64_t out, int64_t rows, int64_t D,
                               double eps) {
  int64_t at = 0;
  const int64_t prod = scratch_take(scratch, at, rows * D, name + ".products");
  {
    RowKernel k(cg, name, rows, D, {x, dy}, {}, {prod}, 2, 2);
    layer_norm_constants(cg, D, eps);
    k.run([&](int64_t) {
      normalize_stats(k);
      for (int64_t j = 0; j < k.blocks(); ++j)
        k.out(0, j, k.binary(Opcode::VMULF, k.in(1, j), normalized(k, j)));
    });
  }
  emit_reduce_rows(cg, name, prod, out, rows, D);
}

void emit_softmax(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t batches,
                  int64_t S, int64_t T, bool causal) {
  if (causal && S > T)
    throw Error("compiler", "softmax '" + name + "': a causal mask over " + std::to_string(S) +
                                " x " + std::to_string(T) + " leaves rows without a column");
  constexpr int kMax = 0, kRcp = 1, kLimit = 2;  // stats; reductions kMax, kRcp (the sum)
  // Causal constants: v3 = S, v4 = T - S + 1, v5 = T, v6 = sublane ids (int32).
  constexpr int kRowsC = 3, kOffsetC = 4, kColsC = 5, kSublaneId = 6;
  RowKernel k(cg, name, batches * S, T, {x}, {}, {y}, 3, 2);
  if (causal) {
    cg.op(Opcode::VBCASTI, kRowsC, 0, 0, 0, static_cast<int32_t>(S));
    cg.op(Opcode::VBCASTI, kOffsetC, 0, 0, 0, static_cast<int32_t>(T - S + 1));
    cg.op(Opcode::VBCASTI, kColsC, 0, 0, 0, static_cast<int32_t>(T));
    cg.op(Opcode::VSUBLANEID, kSublaneId);
  }
  const int64_t sub = cg.spec().sublanes, L = cg.spec().lanes;
  // Block j of x with the masked columns (and the lanes past the row) at -Inf.
  auto masked = [&](int64_t j) {
    const int v = k.in(0, j);
    if (!causal) return k.valid(v, j, kNegInf);
    const int base = cg.vreg();
    cg.op(Opcode::VBCASTI, base, 0, 0, 0, static_cast<int32_t>(j * L));
    cg.op(Opcode::VCMPLTI, kCausalMask, k.binary(Opcode::VADDI, kLaneId, base), k.stat(kLimit));
    const int r = cg.vreg();
    cg.op(Opcode::VSEL, r, v, kNegInf, kCausalMask);
    return r;
  };
  k.run([&](int64_t first) {
    if (causal) {  // per sublane: min(T, (row mod S) + T - S + 1)
      const int q0 = cg.vreg();
      cg.op(Opcode::VBCASTI, q0, 0, 0, 0, static_cast<int32_t>(first % S));
      int pos = k.binary(Opcode::VADDI, kSublaneId, q0);
      for (int64_t w = (first % S + sub - 1) / S; w > 0; --w) {
        cg.op(Opcode::VCMPLEI, kCausalMask, kRowsC, pos);
        const int r = cg.vreg();
        cg.op(Opcode::VSEL, r, k.binary(Opcode::VSUBI, pos, kRowsC), pos, kCausalMask);
        pos = r;
      }
      k.set_stat(kLimit, k.binary(Opcode::VMINI, k.binary(Opcode::VADDI, pos, kOffsetC), kColsC));
    }
    for (int64_t j = 0; j < k.blocks(); ++j) k.reduce(kMax, j, Opcode::RMAX, masked(j));
    k.set_stat(kMax, k.combine(kMax, Opcode::VMAXF, kNegInf));
    for (int64_t j = 0; j < k.blocks(); ++j) {  // e = exp(x - max): +0 where masked
      const int e = k.eup(Opcode::EEXP, k.binary(Opcode::VSUBF, masked(j), k.stat(kMax)));
      k.out(0, j, e);
      k.reduce(kRcp, j, Opcode::RSUM, e);
    }
    k.set_stat(kRcp, k.eup(Opcode::ERCP, k.combine(kRcp, Opcode::VADDF, kPad)));
    for (int64_t j = 0; j < k.blocks(); ++j)
      k.out(0, j, k.binary(Opcode::VMULF, k.out_value(0, j), k.stat(kRcp)));
  });
}

void emit_softmax_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t y, int64_t dx,
                       int64_t rows, int64_t T) {
  constexpr int kDot = 0;
  RowKernel k(cg, name, rows, T, {dy, y}, {}, {dx}, 1, 1);
  k.run([&](int64_t) {
    for (int64_t j = 0; j < k.blocks(); ++j)
      k.reduce(kDot, j, Opcode::RSUM,
               k.valid(k.binary(Opcode::VMULF, k.in(0, j), k.in(1, j)), j, kPad));
    k.set_stat(kDot, k.combine(kDot, Opcode::VADDF, kPad));
    for (int64_t j = 0; j < k.blocks(); ++j)
      k.out(0, j,
            k.binary(Opcode::VMULF, k.in(1, j), k.binary(Opcode::VSUBF, k.in(0, j), k.stat(kDot))));
  });
}

void emit_softmax_xent_rows(Codegen& cg, const std::string& name, int64_t logits, int64_t labels,
                            int64_t loss, int64_t grad, int64_t batch, int64_t classes) {
  constexpr int kMax = 0, kSum = 1, kPick = 2, kAcc = 3;  // stats (kAcc: the loss partials)
  constexpr int kInvB = 3, kOne = 4, kZero = 5, kSublaneId = 6;
  std::vector<int64_t> outs;
  if (grad >= 0) outs.push_back(grad);
  RowKernel k(cg, name, batch, classes, {logits}, {}, outs, 4, 3, {labels});
  cg.op(Opcode::VBCASTI, kInvB, 0, 0, 0, bits(1.0f / static_cast<float>(batch)));
  cg.op(Opcode::VBCASTI, kOne, 0, 0, 0, bits(1.0f));
  cg.op(Opcode::VBCASTI, kZero, 0, 0, 0, 0);
  cg.op(Opcode::VSUBLANEID, kSublaneId);
  k.set_stat(kAcc, kZero);
  const int64_t L = cg.spec().lanes;
  // m2 = the lanes of block j that hold the row's label.
  auto label_lanes = [&](int64_t j) {
    const int base = cg.vreg();
    cg.op(Opcode::VBCASTI, base, 0, 0, 0, static_cast<int32_t>(j * L));
    cg.op(Opcode::VCMPEQI, kCausalMask, k.binary(Opcode::VADDI, kLaneId, base), k.column(0, kZero));
  };
  k.run([&](int64_t first) {
    for (int64_t j = 0; j < k.blocks(); ++j)
      k.reduce(kMax, j, Opcode::RMAX, k.valid(k.in(0, j), j, kNegInf));
    k.set_stat(kMax, k.combine(kMax, Opcode::VMAXF, kNegInf));
    for (int64_t j = 0; j < k.blocks(); ++j) {  // d = x - max; e = exp(d), +0 past the row
      const int d = k.binary(Opcode::VSUBF, k.valid(k.in(0, j), j, kNegInf), k.stat(kMax));
      const int e = k.eup(Opcode::EEXP, d);
      if (grad >= 0) k.out(0, j, e);
      k.reduce(kSum, j, Opcode::RSUM, e);
      label_lanes(j);
      const int picked = cg.vreg();
      cg.op(Opcode::VSEL, picked, d, kZero, kCausalMask);
      k.reduce(kPick, j, Opcode::RSUM, picked);
    }
    const int s = k.combine(kSum, Opcode::VADDF, kZero);
    k.set_stat(kSum, s);
    if (loss >= 0) {  // per row log(s) - d[label], summed per sublane over the valid rows
      const int pick = k.combine(kPick, Opcode::VADDF, kZero);
      const int per_row = k.binary(Opcode::VSUBF, k.eup(Opcode::ELOG, k.stat(kSum)), pick);
      int kept = per_row;
      if (batch - first < cg.spec().sublanes) {  // the last group: rows past the end add +0
        const int valid = cg.vreg();
        kept = cg.vreg();
        cg.op(Opcode::VBCASTI, valid, 0, 0, 0, static_cast<int32_t>(batch - first));
        cg.op(Opcode::VCMPLTI, kCausalMask, kSublaneId, valid);
        cg.op(Opcode::VSEL, kept, per_row, kZero, kCausalMask);
      }
      k.set_stat(kAcc, k.binary(Opcode::VADDF, k.stat(kAcc), kept));
    }
    if (grad < 0) return;
    k.set_stat(kSum, k.eup(Opcode::ERCP, k.stat(kSum)));
    for (int64_t j = 0; j < k.blocks(); ++j) {  // (e * rcp(s) - onehot) * (1 / B)
      const int p = k.binary(Opcode::VMULF, k.out_value(0, j), k.stat(kSum));
      label_lanes(j);
      const int onehot = cg.vreg();
      cg.op(Opcode::VSEL, onehot, kOne, kZero, kCausalMask);
      k.out(0, j, k.binary(Opcode::VMULF, k.binary(Opcode::VSUBF, p, onehot), kInvB));
    }
  });
  if (loss < 0) return;
  const int64_t tmp = cg.spec().vmem_rows() - 2 * cg.spec().sublanes;
  cg.sli(kRegStride2, 2);
  const int acc = cg.vreg();
  cg.vld(acc, k.stat_row(kAcc));
  const int total = k.binary(Opcode::VMULF, sublane_tree_sum(cg, acc, tmp), kInvB);
  cg.vst(total, tmp);
  cg.em().barrier();
  cg.dma(Opcode::DMAVH, loss, tmp * L, 1);
  cg.wait_dmas();
}

}  // namespace tessera::compiler
