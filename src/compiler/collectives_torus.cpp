// The torus (torus-dimension, hierarchical) all-reduce of the collective library: algorithm,
// layout and reduction order in collectives.h (CollectiveAlgorithm::kTorus).
#include <functional>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/collective_algorithm.h"

namespace tessera::compiler {

namespace {

using isa::Opcode;

// floor(x / divisor) for 0 <= x < 2^bits as (x * m) >> k in 32-bit registers (Granlund-Montgomery):
// with k = bits + ceil(log2 divisor) and m = ceil(2^k / divisor), e = m * divisor - 2^k < divisor,
// so x * e < 2^k and the floor is exact; x * m < 2^(2 bits + 1) <= 2^31 for bits <= 15.
struct Magic {
  uint32_t m;
  int k;
};

Magic magic(int divisor, int bits) {
  int log = 0;
  while ((1 << log) < divisor) ++log;
  const int k = bits + log;
  const uint64_t m =
      ((uint64_t{1} << k) + static_cast<uint64_t>(divisor) - 1) / static_cast<uint64_t>(divisor);
  TESSERA_CHECK(((uint64_t{1} << bits) - 1) * m < (uint64_t{1} << 31),
                "torus index arithmetic fits 31 bits");
  return {static_cast<uint32_t>(m), k};
}

// The code of one emission: the spec, the Codegen and the registers held meanwhile.
class TorusCode {
 public:
  TorusCode(const CollectiveSpec& spec, Codegen& cg, HeldRegs& pool)
      : m_spec(spec),
        m_cg(cg),
        m_r(pool),
        m_dims(torus_dims(spec)),
        m_chunks(spec.rings * spec.directions) {
    while ((1 << m_bits) < spec.processors) ++m_bits;
  }

  void program(int processor) {
    emit_load_pid(m_cg, m_r.pid, processor);
    for (int d = 0; d < m_spec.directions; ++d) li(seg(d), 0);
    const int k = static_cast<int>(m_dims.size());
    for (int i = 0; i < k; ++i)
      if (dim(i) > 1) reduce_scatter(i);
    for (int i = k - 1; i >= 0; --i)
      if (dim(i) > 1) all_gather(i);
  }

  // Superstep `superstep` of program() alone, self-contained: straight-line code that recomputes
  // from the index everything program() carries between supersteps (the phase's coordinate and
  // neighbours, each direction's segment start, each chunk's sub-segment) and sends what that
  // superstep sends, without the sync. Phases: the reduce-scatters of the dimensions larger than 1
  // in order, then their all-gathers in reverse, d_i - 1 supersteps each.
  void step(int processor, int superstep) {
    std::vector<std::pair<int, bool>> phases;  // (dimension, all-gather)
    for (int i = 0; i < static_cast<int>(m_dims.size()); ++i)
      if (dim(i) > 1) phases.emplace_back(i, false);
    for (int p = static_cast<int>(phases.size()) - 1; p >= 0; --p)
      phases.emplace_back(phases[static_cast<size_t>(p)].first, true);
    int t = superstep;  // becomes the ring step within the superstep's phase
    size_t at = 0;
    while (t >= dim(phases[at].first) - 1) t -= dim(phases[at++].first) - 1;
    const auto [i, gather] = phases[at];
    const int d = dim(i);
    emit_load_pid(m_cg, m_r.pid, processor);
    // Segment start before phase i (in its reduce-scatter and its all-gather alike): the kept
    // sub-segment of every earlier dimension, a_j + 1 forward and a_j - 1 backward (mod d_j),
    // times its base fragments.
    for (int dir = 0; dir < m_spec.directions; ++dir) li(seg(dir), 0);
    for (int j = 0; j < i; ++j) {
      if (dim(j) == 1) continue;
      coordinate(j);
      for (int dir = 0; dir < m_spec.directions; ++dir) {
        plus_mod(m_r.tmp, coord(), dir == 0 ? 1 : dim(j) - 1, dim(j));
        ri(Opcode::SMULI, m_r.tmp, m_r.tmp, sub(j));
        rr(Opcode::SADD, seg(dir), seg(dir), m_r.tmp);
      }
    }
    coordinate_and_neighbours(i);
    // Chunk c's sub-segment after t ring steps: from a_i (reduce-scatter) or the kept a_i +- 1
    // (all-gather), one back (forward chunks) or on (backward) per step.
    for (int c = 0; c < m_chunks; ++c) {
      const bool forward = c % m_spec.directions == 0;
      const int start = gather ? (forward ? 1 : -1) : 0;
      plus_mod(frag(c), coord(), (((start + (forward ? -t : t)) % d) + d) % d, d);
    }
    const Opcode op = gather ? Opcode::XSEND : reduce_send_op(m_spec);
    for (int c = 0; c < m_chunks; ++c)
      send(c, i, c % m_spec.directions == 0 ? m_r.next : m_r.prev, op);
  }

 private:
  // a_i; a temporary in the sends.
  int coord() const { return m_r.n_or_coord; }
  int frag(int c) const { return m_r.frag[static_cast<size_t>(c)]; }
  // The first base fragment of the segment, per direction.
  int seg(int d) const { return m_r.segment[static_cast<size_t>(d)]; }
  void li(int d, int64_t imm) { m_cg.put(Opcode::SLI, d, 0, 0, 0, static_cast<int32_t>(imm)); }
  void ri(Opcode op, int d, int a, int64_t imm) {
    m_cg.put(op, d, a, 0, 0, static_cast<int32_t>(imm));
  }
  void rr(Opcode op, int d, int a, int b) { m_cg.put(op, d, a, b); }
  int dim(int i) const { return m_dims[static_cast<size_t>(i)]; }
  int stride(int i) const {
    int s = 1;
    for (int j = 0; j < i; ++j) s *= dim(j);
    return s;
  }
  // M_{i+1}: base fragments per sub-segment in phase i.
  int sub(int i) const {
    int s = 1;
    for (int j = i + 1; j < static_cast<int>(m_dims.size()); ++j) s *= dim(j);
    return s;
  }

  // r = r == d ? 0 : r   (r in 0..d)
  void wrap_down(int r, int d) {
    li(m_r.tmp, d);
    rr(Opcode::SSEQ, m_r.tmp, r, m_r.tmp);
    ri(Opcode::SMULI, m_r.tmp, m_r.tmp, d);
    rr(Opcode::SSUB, r, r, m_r.tmp);
  }
  // r = r < 0 ? r + d : r   (r in -1..d-1)
  void wrap_up(int r, int d) {
    ri(Opcode::SSLTI, m_r.tmp, r, 0);
    ri(Opcode::SMULI, m_r.tmp, m_r.tmp, d);
    rr(Opcode::SADD, r, r, m_r.tmp);
  }

  // dst = floor(src / divisor) (src < 2^m_bits).
  void divide(int dst, int src, int divisor) {
    const Magic mg = magic(divisor, m_bits);
    ri(Opcode::SMULI, dst, src, mg.m);
    ri(Opcode::SSHRI, dst, dst, mg.k);
  }

  // dst = (src + offset) mod d, for 0 <= src < d and 0 <= offset < d (dst may be src; uses the
  // temporary unless dst is the temporary, then the sends' third).
  void plus_mod(int dst, int src, int offset, int d) {
    const int tmp = dst == m_r.tmp ? m_r.t[2] : m_r.tmp;
    ri(Opcode::SADDI, dst, src, offset);  // < 2d
    ri(Opcode::SSLTI, tmp, dst, d);       // 1 if already below d
    ri(Opcode::SADDI, tmp, tmp, -1);      // 0 or -1
    ri(Opcode::SMULI, tmp, tmp, d);
    rr(Opcode::SADD, dst, dst, tmp);
  }

  // coord = a_i = (p / stride_i) mod d_i.
  void coordinate(int i) {
    const int d = dim(i), s = stride(i);
    if (s == 1)
      m_cg.put(Opcode::SMOV, coord(), m_r.pid);
    else
      divide(coord(), m_r.pid, s);
    if (sub(i) > 1) {  // higher coordinates present: take the remainder
      divide(m_r.tmp, coord(), d);
      ri(Opcode::SMULI, m_r.tmp, m_r.tmp, d);
      rr(Opcode::SSUB, coord(), coord(), m_r.tmp);
    }
  }

  // coord = a_i; next / prev = the processors at a_i + 1 / a_i - 1 (mod d_i) with the other
  // coordinates equal.
  void coordinate_and_neighbours(int i) {
    const int d = dim(i), s = stride(i);
    coordinate(i);
    ri(Opcode::SADDI, m_r.next, m_r.pid, s);  // a == d-1: back by (d-1) strides
    li(m_r.tmp, d - 1);
    rr(Opcode::SSEQ, m_r.tmp, coord(), m_r.tmp);
    ri(Opcode::SMULI, m_r.tmp, m_r.tmp, d * s);
    rr(Opcode::SSUB, m_r.next, m_r.next, m_r.tmp);
    ri(Opcode::SADDI, m_r.prev, m_r.pid, -s);  // a == 0: on by (d-1) strides
    li(m_r.tmp, 0);
    rr(Opcode::SSEQ, m_r.tmp, coord(), m_r.tmp);
    ri(Opcode::SMULI, m_r.tmp, m_r.tmp, d * s);
    rr(Opcode::SADD, m_r.prev, m_r.prev, m_r.tmp);
  }

  // Phase i's reduce-scatter: sub-segment a_i first, then round the dimension-i ring; afterwards
  // each direction's segment start moves to the kept sub-segment (the fragment register of that
  // direction's first chunk holds it: a_i - (d-1) = a_i + 1 forward, a_i + (d-1) = a_i - 1
  // backward).
  void reduce_scatter(int i) {
    coordinate_and_neighbours(i);
    for (int c = 0; c < m_chunks; ++c) m_cg.put(Opcode::SMOV, frag(c), coord());
    ring(i, reduce_send_op(m_spec));
    for (int d = 0; d < m_spec.directions; ++d) {
      ri(Opcode::SMULI, m_r.tmp, frag(d), sub(i));
      rr(Opcode::SADD, seg(d), seg(d), m_r.tmp);
    }
  }

  // Phase i's all-gather (phases in reverse): the segment start goes back to level i, and each
  // processor starts with the sub-segment it kept (a_i + 1 forward, a_i - 1 backward).
  void all_gather(int i) {
    coordinate_and_neighbours(i);
    const int kept[2] = {m_r.t[0], m_r.t[1]};
    for (int d = 0; d < m_spec.directions; ++d) {
      ri(Opcode::SADDI, kept[d], coord(), d == 0 ? 1 : -1);
      if (d == 0)
        wrap_down(kept[d], dim(i));
      else
        wrap_up(kept[d], dim(i));
      ri(Opcode::SMULI, m_r.tmp, kept[d], sub(i));
      rr(Opcode::SSUB, seg(d), seg(d), m_r.tmp);
    }
    for (int c = 0; c < m_chunks; ++c) m_cg.put(Opcode::SMOV, frag(c), kept[c % m_spec.directions]);
    ring(i, Opcode::XSEND);
  }

  // d_i - 1 supersteps round the dimension-i ring (as the ring all-reduce's phases).
  void ring(int i, Opcode op) {
    emit_ring_phase(
        m_cg, m_spec, m_r.steps, dim(i) - 1,
        [&](int c) { send(c, i, c % m_spec.directions == 0 ? m_r.next : m_r.prev, op); },
        [&](int c) { next_fragment(c, dim(i)); });
  }

  void next_fragment(int c, int d) {
    ri(Opcode::SADDI, frag(c), frag(c), c % m_spec.directions == 0 ? -1 : 1);
    if (c % m_spec.directions == 0)
      wrap_up(frag(c), d);
    else
      wrap_down(frag(c), d);
  }

  // Sends sub-segment frag(c) of chunk c's segment to `to` with `op`: base fragments
  // [k0, k0 + M) with k0 = segment + f * M, M = sub(i); base fragment k starts at word
  // k*q + min(k, r) of the chunk (q, r: the chunk's length over n).
  void send(int c, int i, int to, Opcode op) {
    const auto [cb, ce] = split_range(m_spec.words, m_chunks, c);
    const uint32_t n = static_cast<uint32_t>(m_spec.processors);
    const uint32_t q = (ce - cb) / n, r = (ce - cb) % n;
    const int m = sub(i);
    const int k0 = m_r.t[0], low = m_r.t[1], rr_ = m_r.t[2], len = coord();
    ri(Opcode::SMULI, k0, frag(c), m);
    rr(Opcode::SADD, k0, k0, seg(c % m_spec.directions));
    li(rr_, r);
    rr(Opcode::SMIN, low, k0, rr_);  // min(k0, r)
    ri(Opcode::SADDI, len, k0, m);
    rr(Opcode::SMIN, len, len, rr_);  // min(k0 + M, r)
    rr(Opcode::SSUB, len, len, low);
    ri(Opcode::SADDI, len, len, static_cast<uint32_t>(m) * q);  // length
    ri(Opcode::SMULI, k0, k0, q);
    rr(Opcode::SADD, k0, k0, low);
    ri(Opcode::SADDI, k0, k0, m_spec.base + cb);  // address
    m_cg.put(op, k0, k0, len, to);
  }

  const CollectiveSpec& m_spec;
  Codegen& m_cg;
  CollectiveRegs m_r;
  std::vector<int> m_dims;
  int m_chunks;
  int m_bits = 0;  // every processor index < 2^m_bits
};

// Host reference in the defined order (collectives.h).
std::vector<uint32_t> torus_reference(const CollectiveSpec& spec,
                                      const std::vector<std::vector<uint32_t>>& inputs) {
  const std::vector<int> dims = torus_dims(spec);
  const int k = static_cast<int>(dims.size()), n = spec.processors;
  std::vector<int> stride(static_cast<size_t>(k), 1), sub(static_cast<size_t>(k), 1);
  for (int i = 1; i < k; ++i)
    stride[static_cast<size_t>(i)] =
        stride[static_cast<size_t>(i - 1)] * dims[static_cast<size_t>(i - 1)];
  for (int i = k - 2; i >= 0; --i)
    sub[static_cast<size_t>(i)] =
        sub[static_cast<size_t>(i + 1)] * dims[static_cast<size_t>(i + 1)];
  std::vector<uint32_t> out(spec.words, 0);
  std::vector<int> digit(static_cast<size_t>(k));
  bool forward = true;
  uint32_t e = 0;
  // R_i over the dimension-i ring whose higher coordinates sum to `offset` (collectives.h).
  std::function<uint32_t(int, int)> fold = [&](int i, int offset) -> uint32_t {
    if (i < 0) return inputs[static_cast<size_t>(offset)][e];
    const int d = dims[static_cast<size_t>(i)], f = digit[static_cast<size_t>(i)],
              s = stride[static_cast<size_t>(i)];
    uint32_t acc = fold(i - 1, offset + f * s);
    for (int t = 1; t < d; ++t) {
      const int a = forward ? (f + t) % d : (f - t + d) % d;
      acc = combine_words(spec.combine, fold(i - 1, offset + a * s), acc);
    }
    return acc;
  };
  const int chunks = spec.rings * spec.directions;
  for (int c = 0; c < chunks; ++c) {
    const auto [cb, ce] = split_range(spec.words, chunks, c);
    forward = c % spec.directions == 0;
    for (int b = 0; b < n; ++b) {
      for (int i = 0, rest = b; i < k; ++i) {
        digit[static_cast<size_t>(i)] = rest / sub[static_cast<size_t>(i)];
        rest %= sub[static_cast<size_t>(i)];
      }
      const auto [fb, fe] = split_range(ce - cb, n, b);
      for (e = cb + fb; e < cb + fe; ++e) out[e] = fold(k - 1, 0);
    }
  }
  return out;
}

class Torus final : public CollectiveAlgorithmCode {
 public:
  explicit Torus(const CollectiveSpec& spec) : m_spec(spec) {}

  int supersteps() const override {
    int steps = 0;
    for (int d : torus_dims(m_spec)) steps += 2 * (d - 1);
    return steps;
  }
  void emit(Codegen& cg, HeldRegs& regs, int processor) const override {
    TorusCode(m_spec, cg, regs).program(processor);
  }
  void emit_superstep(Codegen& cg, HeldRegs& regs, int step, int processor) const override {
    TorusCode(m_spec, cg, regs).step(processor, step);
  }
  std::vector<uint32_t> reference(const std::vector<std::vector<uint32_t>>& inputs) const override {
    return torus_reference(m_spec, inputs);
  }

 private:
  CollectiveSpec m_spec;
};

}  // namespace

std::unique_ptr<CollectiveAlgorithmCode> make_torus_collective(const CollectiveSpec& spec) {
  return std::make_unique<Torus>(spec);
}

std::vector<int> torus_dims(const CollectiveSpec& spec) {
  return spec.grid.empty() ? std::vector<int>{spec.processors} : spec.grid;
}

void validate_torus(const CollectiveSpec& spec) {
  if (spec.kind != CollectiveKind::kAllReduce)
    throw Error("collective.algorithm",
                "torus is an all-reduce algorithm; all-gather and broadcast use ring");
  int64_t product = 1;
  std::string shape;
  const std::vector<int> dims = torus_dims(spec);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1)
      throw Error("collective.grid",
                  fmt::format("dimension {} is {}: must be at least 1", i, dims[i]));
    product *= dims[i];
    if (product > kMaxTorusProcessors) break;
    shape += (i > 0 ? " x " : "") + std::to_string(dims[i]);
  }
  if (product != spec.processors)
    throw Error("collective.grid", product > kMaxTorusProcessors
                                       ? fmt::format("more than {} processors, the spec has {}",
                                                     kMaxTorusProcessors, spec.processors)
                                       : fmt::format("{} = {} processors, the spec has {}", shape,
                                                     product, spec.processors));
  if (spec.processors > kMaxTorusProcessors)
    throw Error("collective.processors", fmt::format("{}: the torus all-reduce indexes at most {}",
                                                     spec.processors, kMaxTorusProcessors));
}

}  // namespace tessera::compiler
