// The ring algorithm of the collective library (all-reduce, all-gather, broadcast): layout,
// superstep schedule and reduction order in collectives.h.
#include "compiler/collective_algorithm.h"

namespace tessera::compiler {

namespace {

using isa::Opcode;

// The code of one emission: the spec, the Codegen and the registers held meanwhile.
class RingCode {
 public:
  RingCode(const CollectiveSpec& spec, Codegen& cg, HeldRegs& pool)
      : m_spec(spec), m_cg(cg), m_r(pool), m_chunks(spec.rings * spec.directions) {}

  // The same code for every processor count (n is one immediate): the image's size and the time
  // to generate it do not depend on n. One processor branches past the exchange at run time.
  void program(int processor) {
    emit_load_pid(m_cg, m_r.pid, processor);
    li(n(), m_spec.processors);
    li(m_r.tmp, 1);
    const int done = m_cg.label();
    m_cg.put_branch(Opcode::BEQ, n(), m_r.tmp, done);
    ri(Opcode::SADDI, m_r.next, m_r.pid, 1);  // next = (p + 1) mod n
    wrap_down(m_r.next);
    ri(Opcode::SADDI, m_r.prev, m_r.pid, -1);  // prev = (p - 1) mod n
    wrap_up(m_r.prev);
    if (m_spec.kind == CollectiveKind::kBroadcast) scatter();
    for (int c = 0; c < m_chunks; ++c) m_cg.put(Opcode::SMOV, frag(c), m_r.pid);
    if (m_spec.kind == CollectiveKind::kAllReduce) ring_phase(reduce_send_op(m_spec));
    ring_phase(Opcode::XSEND);
    m_cg.bind(done);
  }

  // Superstep k of the all-reduce alone: p, n, neighbours and every chunk's fragment index,
  // (p - k) mod n forward, (p + k) mod n backward, recomputed from the index.
  void step(int processor, int k) {
    const int np = m_spec.processors;
    emit_load_pid(m_cg, m_r.pid, processor);
    li(n(), np);
    ri(Opcode::SADDI, m_r.next, m_r.pid, 1);
    wrap_down(m_r.next);
    ri(Opcode::SADDI, m_r.prev, m_r.pid, -1);
    wrap_up(m_r.prev);
    const Opcode op = k >= np - 1 ? Opcode::XSEND : reduce_send_op(m_spec);
    for (int c = 0; c < m_chunks; ++c) {
      const bool forward = c % m_spec.directions == 0;
      const int back = k % np == 0 ? 0 : k % np - np;  // (p + k) mod n = p + back (+ n if < 0)
      ri(Opcode::SADDI, frag(c), m_r.pid, forward ? -(k % np) : back);
      wrap_up(frag(c));
      send(c, frag(c), forward ? m_r.next : m_r.prev, op);
    }
  }

 private:
  int n() const { return m_r.n_or_coord; }
  int frag(int c) const { return m_r.frag[static_cast<size_t>(c)]; }
  void li(int d, int64_t imm) { m_cg.put(Opcode::SLI, d, 0, 0, 0, static_cast<int32_t>(imm)); }
  void ri(Opcode op, int d, int a, int64_t imm) {
    m_cg.put(op, d, a, 0, 0, static_cast<int32_t>(imm));
  }
  void rr(Opcode op, int d, int a, int b) { m_cg.put(op, d, a, b); }

  // r = r == n ? 0 : r   (r in 0..n)
  void wrap_down(int r) {
    rr(Opcode::SSEQ, m_r.tmp, r, n());
    rr(Opcode::SMUL, m_r.tmp, m_r.tmp, n());
    rr(Opcode::SSUB, r, r, m_r.tmp);
  }
  // r = r < 0 ? r + n : r   (r in -1..n-1)
  void wrap_up(int r) {
    ri(Opcode::SSLTI, m_r.tmp, r, 0);
    rr(Opcode::SMUL, m_r.tmp, m_r.tmp, n());
    rr(Opcode::SADD, r, r, m_r.tmp);
  }

  // Sends fragment `f` (a register) of chunk c to processor `to` (a register) with `op`:
  // off = f*q + min(f, r), len = q + (f < r), both at vmem word base + chunk begin + off.
  void send(int c, int f, int to, Opcode op) {
    const auto [cb, ce] = split_range(m_spec.words, m_chunks, c);
    const uint32_t len = ce - cb;
    const uint32_t q = len / static_cast<uint32_t>(m_spec.processors);
    const uint32_t r = len % static_cast<uint32_t>(m_spec.processors);
    const int off = m_r.t[0], count = m_r.t[1], low = m_r.t[2];
    ri(Opcode::SMULI, off, f, q);
    li(count, r);
    rr(Opcode::SMIN, low, f, count);
    rr(Opcode::SSLT, count, f, count);
    rr(Opcode::SADD, off, off, low);
    ri(Opcode::SADDI, count, count, q);
    ri(Opcode::SADDI, off, off, m_spec.base + cb);
    m_cg.put(op, off, off, count, to);
  }

  // n-1 supersteps: each chunk sends its current fragment to its ring successor, then the
  // fragment index moves one step against the ring direction.
  void ring_phase(Opcode op) {
    emit_ring_phase(
        m_cg, m_spec, m_r.steps, m_spec.processors - 1,
        [&](int c) { send(c, frag(c), c % m_spec.directions == 0 ? m_r.next : m_r.prev, op); },
        [&](int c) { next_fragment(c); });
  }

  // Chunk c's fragment index moves one step against its ring direction.
  void next_fragment(int c) {
    if (c % m_spec.directions == 0) {
      ri(Opcode::SADDI, frag(c), frag(c), -1);
      wrap_up(frag(c));
    } else {
      ri(Opcode::SADDI, frag(c), frag(c), 1);
      wrap_down(frag(c));
    }
  }

  // Broadcast's first superstep: the root (branching on its index) sends fragment f of every
  // chunk to processor f != root.
  void scatter() {
    HeldRegs& pool = m_r.pool;
    const int root = pool.take(), f = pool.take(), count = pool.take();
    li(root, m_spec.root);
    const int sync = m_cg.label(), top = m_cg.label(), skip = m_cg.label();
    m_cg.put_branch(Opcode::BNE, m_r.pid, root, sync);
    li(f, 0);
    li(count, m_spec.processors);
    m_cg.bind(top);
    m_cg.put_branch(Opcode::BEQ, f, root, skip);
    for (int c = 0; c < m_chunks; ++c) send(c, f, f, Opcode::XSEND);
    m_cg.bind(skip);
    ri(Opcode::SADDI, f, f, 1);
    m_cg.put_branch(Opcode::LOOP, count, 0, top);
    m_cg.bind(sync);
    m_cg.put(Opcode::SYNC);
    for (int r : {root, f, count}) pool.give(r);
  }

  const CollectiveSpec& m_spec;
  Codegen& m_cg;
  CollectiveRegs m_r;
  int m_chunks;
};

class Ring final : public CollectiveAlgorithmCode {
 public:
  explicit Ring(const CollectiveSpec& spec) : m_spec(spec) {}

  int supersteps() const override {
    const int n = m_spec.processors;
    if (n == 1) return 0;
    if (m_spec.kind == CollectiveKind::kAllGather) return n - 1;
    return m_spec.kind == CollectiveKind::kBroadcast ? n : 2 * (n - 1);
  }

  void emit(Codegen& cg, HeldRegs& regs, int processor) const override {
    RingCode(m_spec, cg, regs).program(processor);
  }

  void emit_superstep(Codegen& cg, HeldRegs& regs, int step, int processor) const override {
    RingCode(m_spec, cg, regs).step(processor, step);
  }

  std::vector<uint32_t> reference(const std::vector<std::vector<uint32_t>>& inputs) const override {
    const int n = m_spec.processors;
    std::vector<uint32_t> out(m_spec.words, 0);
    const int chunks = m_spec.rings * m_spec.directions;
    for (int c = 0; c < chunks; ++c) {
      const auto [cb, ce] = split_range(m_spec.words, chunks, c);
      const bool forward = c % m_spec.directions == 0;
      for (int f = 0; f < n; ++f) {
        const auto [fb, fe] = split_range(ce - cb, n, f);
        for (uint32_t i = cb + fb; i < cb + fe; ++i) {
          uint32_t acc = inputs[static_cast<size_t>(f)][i];
          if (m_spec.kind == CollectiveKind::kAllReduce)
            for (int k = 1; k < n; ++k) {
              const int q = forward ? (f + k) % n : (f - k + n) % n;
              acc = combine_words(m_spec.combine, inputs[static_cast<size_t>(q)][i], acc);
            }
          out[i] = acc;
        }
      }
    }
    return out;
  }

 private:
  CollectiveSpec m_spec;
};

}  // namespace

std::unique_ptr<CollectiveAlgorithmCode> make_ring_collective(const CollectiveSpec& spec) {
  return std::make_unique<Ring>(spec);
}

}  // namespace tessera::compiler
