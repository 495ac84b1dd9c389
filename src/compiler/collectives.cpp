#include "compiler/collectives.h"

#include <bit>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/collectives_torus.h"
#include "isa/assembler.h"
#include "numerics/reduce.h"

namespace tessera::compiler {

namespace {

// Scalar registers of the generated code.
constexpr const char* kPid = "s1";
constexpr const char* kN = "s2";
constexpr const char* kNext = "s3";
constexpr const char* kPrev = "s4";
constexpr const char* kSteps = "s6";
constexpr int kFirstFragmentReg = 10;  // s10.. : the fragment index of each chunk
constexpr int kMaxChunks = 12;

class Gen {
 public:
  Gen(const CollectiveSpec& spec) : m_spec(spec), m_chunks(spec.rings * spec.directions) {}

  // The same code for every processor count (n is one immediate): the image's size and the time
  // to generate it do not depend on n. One processor branches past the exchange at run time.
  std::string program(const std::string& pid_line) {
    line(pid_line);
    line(fmt::format("sli {}, {}", kN, m_spec.processors));
    line("sli s5, 1");
    line(fmt::format("beq {}, s5, {}done", kN, m_spec.label_prefix));
    line(fmt::format("saddi {}, {}, 1", kNext, kPid));  // next = (p + 1) mod n
    wrap_down(kNext);
    line(fmt::format("saddi {}, {}, -1", kPrev, kPid));  // prev = (p - 1) mod n
    wrap_up(kPrev);
    if (m_spec.kind == CollectiveKind::kBroadcast) scatter();
    for (int c = 0; c < m_chunks; ++c) line(fmt::format("smov {}, {}", frag(c), kPid));
    if (m_spec.kind == CollectiveKind::kAllReduce)
      ring_phase("rs", m_spec.combine == core::XCombine::Max ? "xsend.max" : "xsend.add");
    ring_phase("ag", "xsend");
    label("done");
    if (m_spec.halt) line("halt");
    return m_out;
  }

  // Superstep k of the all-reduce alone (collective_step_asm): p, n, neighbours and every chunk's
  // fragment index, (p - k) mod n forward, (p + k) mod n backward, recomputed from the index.
  std::string step(const std::string& pid_line, int k) {
    const int n = m_spec.processors;
    line(pid_line);
    line(fmt::format("sli {}, {}", kN, n));
    line(fmt::format("saddi {}, {}, 1", kNext, kPid));
    wrap_down(kNext);
    line(fmt::format("saddi {}, {}, -1", kPrev, kPid));
    wrap_up(kPrev);
    const std::string op = k >= n - 1                              ? "xsend"
                           : m_spec.combine == core::XCombine::Max ? "xsend.max"
                                                                   : "xsend.add";
    for (int c = 0; c < m_chunks; ++c) {
      const bool forward = c % m_spec.directions == 0;
      const int back = k % n == 0 ? 0 : k % n - n;  // (p + k) mod n = p + back (+ n when negative)
      line(fmt::format("saddi {}, {}, {}", frag(c), kPid, forward ? -(k % n) : back));
      wrap_up(frag(c));
      send(c, frag(c), forward ? kNext : kPrev, op);
    }
    return m_out;
  }

 private:
  static std::string frag(int c) { return fmt::format("s{}", kFirstFragmentReg + c); }
  void line(const std::string& s) { m_out += "  " + s + "\n"; }
  void label(const std::string& s) { m_out += m_spec.label_prefix + s + ":\n"; }

  // r = r == n ? 0 : r   (r in 0..n)
  void wrap_down(const std::string& r) {
    line(fmt::format("sseq s5, {}, {}", r, kN));
    line(fmt::format("smul s5, s5, {}", kN));
    line(fmt::format("ssub {}, {}, s5", r, r));
  }
  // r = r < 0 ? r + n : r   (r in -1..n-1)
  void wrap_up(const std::string& r) {
    line(fmt::format("sslti s5, {}, 0", r));
    line(fmt::format("smul s5, s5, {}", kN));
    line(fmt::format("sadd {}, {}, s5", r, r));
  }

  // Sends fragment `f` (a register) of chunk c to processor `to` (a register) with `op`:
  // off = f*q + min(f, r), len = q + (f < r), both at vmem word base + chunk begin + off.
  void send(int c, const std::string& f, const std::string& to, const std::string& op) {
    const auto [cb, ce] = split_range(m_spec.words, m_chunks, c);
    const uint32_t len = ce - cb;
    const uint32_t q = len / static_cast<uint32_t>(m_spec.processors);
    const uint32_t r = len % static_cast<uint32_t>(m_spec.processors);
    line(fmt::format("smuli s7, {}, {}", f, q));
    line(fmt::format("sli s8, {}", r));
    line(fmt::format("smin s9, {}, s8", f));
    line(fmt::format("sslt s8, {}, s8", f));
    line("sadd s7, s7, s9");
    line(fmt::format("saddi s8, s8, {}", q));
    line(fmt::format("saddi s7, s7, {}", m_spec.base + cb));
    line(fmt::format("{} s7, s7, s8, {}", op, to));
  }

  // n-1 supersteps: each chunk sends its current fragment to its ring successor, then the
  // fragment index moves one step against the ring direction.
  void ring_phase(const std::string& name, const std::string& op) {
    line(fmt::format("sli {}, {}", kSteps, m_spec.processors - 1));
    label(name);
    for (int c = 0; c < m_chunks; ++c) {
      send(c, frag(c), c % m_spec.directions == 0 ? kNext : kPrev, op);
      if (!m_spec.split_phase) next_fragment(c);
    }
    if (m_spec.split_phase) {
      line("xsync");
      for (int c = 0; c < m_chunks; ++c) next_fragment(c);
      line("xwait");
    } else {
      line("sync");
    }
    line(fmt::format("loop {}, {}{}", kSteps, m_spec.label_prefix, name));
  }

  // Chunk c's fragment index moves one step against its ring direction.
  void next_fragment(int c) {
    if (c % m_spec.directions == 0) {
      line(fmt::format("saddi {}, {}, -1", frag(c), frag(c)));
      wrap_up(frag(c));
    } else {
      line(fmt::format("saddi {}, {}, 1", frag(c), frag(c)));
      wrap_down(frag(c));
    }
  }

  // Broadcast's first superstep: the root (branching on its index) sends fragment f of every
  // chunk to processor f != root.
  void scatter() {
    line(fmt::format("sli s20, {}", m_spec.root));
    line(fmt::format("bne {}, s20, {}bc_sync", kPid, m_spec.label_prefix));
    line("sli s21, 0");
    line(fmt::format("sli s22, {}", m_spec.processors));
    label("bc_scatter");
    line(fmt::format("beq s21, s20, {}bc_skip", m_spec.label_prefix));
    for (int c = 0; c < m_chunks; ++c) send(c, "s21", "s21", "xsend");
    label("bc_skip");
    line("saddi s21, s21, 1");
    line(fmt::format("loop s22, {}bc_scatter", m_spec.label_prefix));
    label("bc_sync");
    line("sync");
  }

  const CollectiveSpec& m_spec;
  int m_chunks;
  std::string m_out;
};

}  // namespace

uint32_t combine_words(core::XCombine c, uint32_t local, uint32_t received) {
  const float a = std::bit_cast<float>(local), b = std::bit_cast<float>(received);
  return std::bit_cast<uint32_t>(c == core::XCombine::Max ? numerics::fmax_ieee(a, b) : a + b);
}

const char* algorithm_name(CollectiveAlgorithm a) {
  return a == CollectiveAlgorithm::kTorus ? "torus" : "ring";
}

CollectiveAlgorithm algorithm_from_name(const std::string& name, const std::string& where) {
  if (name == "ring") return CollectiveAlgorithm::kRing;
  if (name == "torus") return CollectiveAlgorithm::kTorus;
  throw Error(where, fmt::format("'{}': expected ring or torus", name));
}

int collective_supersteps(const CollectiveSpec& spec) {
  validate(spec);
  if (spec.algorithm == CollectiveAlgorithm::kTorus) {
    int steps = 0;
    for (int d : torus_dims(spec)) steps += 2 * (d - 1);
    return steps;
  }
  const int n = spec.processors;
  if (n == 1) return 0;
  if (spec.kind == CollectiveKind::kAllGather) return n - 1;
  return spec.kind == CollectiveKind::kBroadcast ? n : 2 * (n - 1);
}

std::pair<uint32_t, uint32_t> split_range(uint32_t total, int parts, int i) {
  const auto p = static_cast<uint32_t>(parts), k = static_cast<uint32_t>(i);
  const uint32_t q = total / p, r = total % p;
  const uint32_t begin = k * q + std::min(k, r);
  return {begin, begin + q + (k < r ? 1u : 0u)};
}

void validate(const CollectiveSpec& spec) {
  if (spec.processors < 1)
    throw Error("collective.processors", fmt::format("{}: need at least 1", spec.processors));
  if (spec.rings < 1 || spec.rings > 6)
    throw Error("collective.rings", fmt::format("{}: must be 1..6", spec.rings));
  if (spec.directions < 1 || spec.directions > 2)
    throw Error("collective.directions", fmt::format("{}: must be 1 or 2", spec.directions));
  static_assert(6 * 2 <= kMaxChunks);
  if (spec.root < 0 || spec.root >= spec.processors)
    throw Error("collective.root",
                fmt::format("{} is not a processor (0..{})", spec.root, spec.processors - 1));
  if (spec.combine == core::XCombine::Store)
    throw Error("collective.combine", "all-reduce needs add or max");
  if (spec.algorithm == CollectiveAlgorithm::kTorus)
    validate_torus(spec);
  else if (!spec.grid.empty())
    throw Error("collective.grid", "only the torus algorithm takes a grid");
}

std::string collective_asm(const CollectiveSpec& spec) {
  validate(spec);
  const std::string pid_line = fmt::format("smfsr {}, %pid", kPid);
  if (spec.algorithm == CollectiveAlgorithm::kTorus) return torus_allreduce_asm(spec, pid_line);
  return Gen(spec).program(pid_line);
}

std::string collective_asm_for(const CollectiveSpec& spec, int processor) {
  validate(spec);
  if (processor < 0 || processor >= spec.processors)
    throw Error("collective",
                fmt::format("processor {} outside 0..{}", processor, spec.processors - 1));
  const std::string pid_line = fmt::format("sli {}, {}", kPid, processor);
  if (spec.algorithm == CollectiveAlgorithm::kTorus) return torus_allreduce_asm(spec, pid_line);
  return Gen(spec).program(pid_line);
}

int collective_steps(const CollectiveSpec& spec) {
  validate(spec);
  if (spec.kind != CollectiveKind::kAllReduce)
    throw Error("collective", "single supersteps exist for the all-reduce only");
  return collective_supersteps(spec);
}

std::string collective_step_asm(const CollectiveSpec& spec, int step, int processor) {
  const int steps = collective_steps(spec);
  if (step < 0 || step >= steps)
    throw Error("collective", fmt::format("superstep {} outside 0..{}", step, steps - 1));
  if (processor >= spec.processors)
    throw Error("collective",
                fmt::format("processor {} outside 0..{}", processor, spec.processors - 1));
  const std::string pid_line = processor < 0 ? fmt::format("smfsr {}, %pid", kPid)
                                             : fmt::format("sli {}, {}", kPid, processor);
  if (spec.algorithm == CollectiveAlgorithm::kTorus)
    return torus_allreduce_step_asm(spec, pid_line, step);
  return Gen(spec).step(pid_line, step);
}

isa::Program collective_program(const CollectiveSpec& spec) {
  return isa::assemble(collective_asm(spec), "<collective>");
}

isa::Program collective_program_for(const CollectiveSpec& spec, int processor) {
  isa::Program p = isa::assemble(collective_asm_for(spec, processor),
                                 fmt::format("<collective p{}>", processor));
  p.index = static_cast<uint32_t>(processor);
  return p;
}

std::vector<uint32_t> collective_reference(const CollectiveSpec& spec,
                                           const std::vector<std::vector<uint32_t>>& inputs) {
  validate(spec);
  const int n = spec.processors;
  if (static_cast<int>(inputs.size()) != n)
    throw Error("collective_reference", "one input per processor");
  for (const auto& in : inputs)
    if (in.size() != spec.words)
      throw Error("collective_reference", "every input has `words` words");
  if (spec.kind == CollectiveKind::kBroadcast) return inputs[static_cast<size_t>(spec.root)];
  if (spec.algorithm == CollectiveAlgorithm::kTorus) return torus_allreduce_reference(spec, inputs);
  std::vector<uint32_t> out(spec.words, 0);
  const int chunks = spec.rings * spec.directions;
  for (int c = 0; c < chunks; ++c) {
    const auto [cb, ce] = split_range(spec.words, chunks, c);
    const bool forward = c % spec.directions == 0;
    for (int f = 0; f < n; ++f) {
      const auto [fb, fe] = split_range(ce - cb, n, f);
      for (uint32_t i = cb + fb; i < cb + fe; ++i) {
        uint32_t acc = inputs[static_cast<size_t>(f)][i];
        if (spec.kind == CollectiveKind::kAllReduce)
          for (int k = 1; k < n; ++k) {
            const int q = forward ? (f + k) % n : (f - k + n) % n;
            acc = combine_words(spec.combine, inputs[static_cast<size_t>(q)][i], acc);
          }
        out[i] = acc;
      }
    }
  }
  return out;
}

}  // namespace tessera::compiler
