#include "compiler/kernels_sample.h"

#include <limits>

#include "common/error.h"
#include "common/int_math.h"
#include "compiler/kernels.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

// Constant registers of the kernel (kTop and kIndex: index_of_max's maximum and result, live
// across more pool registers than the rotation keeps) and its mask registers.
constexpr int kLane = 0, kNegInf = 1, kOne = 2, kInvT = 3, kTop = 4, kIndex = 5;
constexpr int kTailMask = 1, kMask = 2;

class SampleKernel {
 public:
  SampleKernel(Codegen& cg, const std::string& name, int64_t n)
      : m_cg(cg), m_S(cg.spec().sublanes), m_L(cg.spec().lanes), m_n(n), m_nb(ceil_div(n, m_L)) {
    if (n > int64_t{m_S} * m_L)
      throw Error("compiler", "sampling '" + name + "': " + std::to_string(n) +
                                  " logits exceed the " + std::to_string(m_S * m_L) +
                                  " words of one rng draw");
    if (rows_end() > cg.spec().vmem_rows())
      throw Error("compiler", "sampling '" + name + "' needs " + std::to_string(rows_end()) +
                                  " rows of vector memory; the core has " +
                                  std::to_string(cg.spec().vmem_rows()));
  }

  // Slots of S rows: logits, unpicked logits, candidate flags, scores (each per block), then
  // the draw (2 S rows: a block's load reads S rows from row draw + j) and the result.
  int64_t x(int64_t j) const { return j * m_S; }
  int64_t rest(int64_t j) const { return (m_nb + j) * m_S; }
  int64_t flag(int64_t j) const { return (2 * m_nb + j) * m_S; }
  int64_t score(int64_t j) const { return (3 * m_nb + j) * m_S; }
  int64_t draw() const { return 4 * m_nb * m_S; }
  int64_t result() const { return draw() + 2 * m_S; }
  int64_t rows_end() const { return result() + m_S; }
  int64_t blocks() const { return m_nb; }

  int load(int64_t row) {
    const int v = m_cg.vreg();
    m_cg.vld(v, row);
    return v;
  }
  int op(Opcode o, int a, int b = 0) {
    const int v = m_cg.vreg();
    m_cg.op(o, v, a, b);
    return v;
  }
  int select(int mask, int yes, int no) {
    const int v = m_cg.vreg();
    m_cg.op(Opcode::VSEL, v, yes, no, mask);
    return v;
  }
  int pop(Opcode unit_op, Opcode pop_op, int a) {
    m_cg.op(unit_op, 0, a);
    const int v = m_cg.vreg();
    m_cg.op(pop_op, v);
    return v;
  }
  int bcast(int32_t bits_value) {
    const int v = m_cg.vreg();
    m_cg.op(Opcode::VBCASTI, v, 0, 0, 0, bits_value);
    return v;
  }
  // float(j * L + lane), negated when `negative`.
  int index(int64_t j, bool negative) {
    const int f =
        op(Opcode::VCVTI2F, op(Opcode::VADDI, kLane, bcast(static_cast<int32_t>(j * m_L))));
    return negative ? op(Opcode::VNEGF, f) : f;
  }

  // Loads the logits (the lanes past the row's end -Inf) and sets the constants.
  void begin(int64_t logits, const numerics::Sampling& s) {
    for (int64_t j = 0; j < m_nb; ++j)
      m_cg.dma(Opcode::DMAHV, x(j) * m_L, logits + j * m_L, std::min<int64_t>(m_L, m_n - j * m_L));
    m_cg.wait_dmas();
    m_cg.op(Opcode::VLANEID, kLane);
    m_cg.op(Opcode::VBCASTI, kNegInf, 0, 0, 0, bits(-std::numeric_limits<float>::infinity()));
    m_cg.op(Opcode::VBCASTI, kOne, 0, 0, 0, bits(1.0f));
    m_cg.op(Opcode::VBCASTI, kInvT, 0, 0, 0,
            bits(s.temperature > 0 ? static_cast<float>(1.0 / s.temperature) : 0.0f));
    const int64_t tail = m_n - (m_nb - 1) * m_L;
    if (tail < m_L) {
      m_cg.op(Opcode::VCMPLTI, kTailMask, kLane, bcast(static_cast<int32_t>(tail)));
      m_cg.vst(select(kTailMask, load(x(m_nb - 1)), kNegInf), x(m_nb - 1));
    }
  }

  // kIndex = the lowest index of the largest value of the blocks at rows(j), as fp32 in every
  // lane.
  template <class Rows>
  void index_of_max(Rows rows) {
    int m = load(rows(0));
    for (int64_t j = 1; j < m_nb; ++j) m = op(Opcode::VMAXF, m, load(rows(j)));
    m_cg.op(Opcode::RMAX, 0, m);
    m_cg.op(Opcode::RPOP, kTop);
    int c = -1;
    for (int64_t j = 0; j < m_nb; ++j) {
      m_cg.op(Opcode::VCMPEQF, kMask, load(rows(j)), kTop);
      const int cj = select(kMask, index(j, true), kNegInf);
      c = c < 0 ? cj : op(Opcode::VMAXF, c, cj);
    }
    m_cg.op(Opcode::VNEGF, kIndex, pop(Opcode::RMAX, Opcode::RPOP, c));
  }

  // The candidate flags of the top k logits (1.0, else 0).
  void top_k(int k) {
    const int zero = bcast(0);
    for (int64_t j = 0; j < m_nb; ++j) {
      m_cg.vst(load(x(j)), rest(j));
      m_cg.vst(zero, flag(j));
    }
    for (int i = 0; i < k; ++i) {
      m_cg.restart_pools();
      index_of_max([this](int64_t j) { return rest(j); });
      for (int64_t j = 0; j < m_nb; ++j) {
        m_cg.restart_pools();
        m_cg.op(Opcode::VCMPEQF, kMask, index(j, false), kIndex);
        m_cg.vst(select(kMask, kNegInf, load(rest(j))), rest(j));
        m_cg.vst(select(kMask, kOne, load(flag(j))), flag(j));
      }
    }
  }

  // score = x * f32(1/T) - log(-log(u)) (candidates only, else -Inf) from one rng draw.
  void scores(bool cut) {
    const int w = m_cg.vreg();
    m_cg.op(Opcode::RNG, w);
    m_cg.vst(w, draw());
    for (int64_t j = 0; j < m_nb; ++j) {
      m_cg.restart_pools();
      // One emitted instruction per statement: the code does not depend on the order in which
      // a compiler evaluates call arguments.
      const int word = load(draw() + j);
      const int eight = bcast(8);
      const int f = op(Opcode::VCVTI2F, op(Opcode::VSHR, word, eight));
      const int half = bcast(bits(0.5f));
      const int ulp = bcast(bits(0x1p-24f));
      const int u = op(Opcode::VMULF, op(Opcode::VADDF, f, half), ulp);
      const int l1 = pop(Opcode::ELOG, Opcode::EPOP, u);
      const int l2 = pop(Opcode::ELOG, Opcode::EPOP, op(Opcode::VNEGF, l1));
      const int scaled = op(Opcode::VMULF, load(x(j)), kInvT);
      int sc = op(Opcode::VADDF, scaled, op(Opcode::VNEGF, l2));
      if (cut) {
        m_cg.op(Opcode::VCMPEQF, kMask, load(flag(j)), kOne);
        sc = select(kMask, sc, kNegInf);
      }
      m_cg.vst(sc, score(j));
    }
  }

  // The token kIndex to `out`.
  void finish(int64_t out) {
    m_cg.vst(op(Opcode::VCVTF2I, kIndex), result());
    m_cg.em().barrier();
    m_cg.dma(Opcode::DMAVH, out, result() * m_L, 1);
    m_cg.wait_dmas();
  }

 private:
  Codegen& m_cg;
  int m_S, m_L;
  int64_t m_n, m_nb;
};

}  // namespace

void emit_sample(Codegen& cg, const std::string& name, int64_t logits, int64_t out, int64_t n,
                 const numerics::Sampling& s) {
  numerics::check_sampling(s, static_cast<int>(n));
  SampleKernel k(cg, name, n);
  cg.restart_pools();
  k.begin(logits, s);
  if (s.temperature == 0) {
    k.index_of_max([&k](int64_t j) { return k.x(j); });
  } else {
    const bool cut = s.top_k > 0 && s.top_k < n;
    if (cut) k.top_k(s.top_k);
    k.scores(cut);
    cg.restart_pools();
    k.index_of_max([&k](int64_t j) { return k.score(j); });
  }
  k.finish(out);
  cg.touch_rows(k.rows_end());
}

isa::Program rng_seed_program(uint32_t seed, const core::CoreSpec& spec) {
  Codegen cg(spec);
  const int s = cg.sreg();
  cg.sli(s, static_cast<int32_t>(seed));
  cg.op(Opcode::RNGSEED, 0, s);
  return cg.finish();
}

}  // namespace tessera::compiler
