#include "compiler/collectives_torus.h"

#include <functional>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::compiler {

namespace {

// Scalar registers of the generated code.
constexpr const char* kPid = "s1";
constexpr const char* kCoord =
    "s2";  // the processor's coordinate a_i; a temporary in the ring steps
constexpr const char* kNext = "s3";
constexpr const char* kPrev = "s4";
constexpr const char* kTmp = "s5";
constexpr const char* kSteps = "s6";
constexpr int kFirstFragmentReg = 10;  // s10..s21: each chunk's sub-segment index
constexpr const char* kSegment[2] = {"s22",
                                     "s23"};  // first base fragment of the segment, per direction

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

class TorusGen {
 public:
  explicit TorusGen(const CollectiveSpec& spec)
      : m_spec(spec), m_dims(torus_dims(spec)), m_chunks(spec.rings * spec.directions) {
    while ((1 << m_bits) < spec.processors) ++m_bits;
  }

  std::string program(const std::string& pid_line) {
    line(pid_line);
    for (int d = 0; d < m_spec.directions; ++d) line(fmt::format("sli {}, 0", kSegment[d]));
    const int k = static_cast<int>(m_dims.size());
    for (int i = 0; i < k; ++i)
      if (m_dims[static_cast<size_t>(i)] > 1) reduce_scatter(i);
    for (int i = k - 1; i >= 0; --i)
      if (m_dims[static_cast<size_t>(i)] > 1) all_gather(i);
    if (m_spec.halt) line("halt");
    return m_out;
  }

  // Superstep `superstep` of program() alone, self-contained (collective_step_asm): straight-line
  // code that recomputes from the index everything program() carries between supersteps (the
  // phase's coordinate and neighbours, each direction's segment start, each chunk's sub-segment)
  // and sends what that superstep sends, without the sync. Phases: the reduce-scatters of the
  // dimensions larger than 1 in order, then their all-gathers in reverse, d_i - 1 supersteps each.
  std::string step(const std::string& pid_line, int superstep) {
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
    line(pid_line);
    // Segment start before phase i (in its reduce-scatter and its all-gather alike): the kept
    // sub-segment of every earlier dimension, a_j + 1 forward and a_j - 1 backward (mod d_j),
    // times its base fragments.
    for (int dir = 0; dir < m_spec.directions; ++dir) line(fmt::format("sli {}, 0", kSegment[dir]));
    for (int j = 0; j < i; ++j) {
      if (dim(j) == 1) continue;
      coordinate(j);
      for (int dir = 0; dir < m_spec.directions; ++dir) {
        plus_mod(kTmp, kCoord, dir == 0 ? 1 : dim(j) - 1, dim(j));
        line(fmt::format("smuli {}, {}, {}", kTmp, kTmp, sub(j)));
        line(fmt::format("sadd {}, {}, {}", kSegment[dir], kSegment[dir], kTmp));
      }
    }
    coordinate_and_neighbours(i);
    // Chunk c's sub-segment after t ring steps: from a_i (reduce-scatter) or the kept a_i +- 1
    // (all-gather), one back (forward chunks) or on (backward) per step.
    for (int c = 0; c < m_chunks; ++c) {
      const bool forward = c % m_spec.directions == 0;
      const int start = gather ? (forward ? 1 : -1) : 0;
      plus_mod(frag(c), kCoord, (((start + (forward ? -t : t)) % d) + d) % d, d);
    }
    const std::string op = gather                                  ? "xsend"
                           : m_spec.combine == core::XCombine::Max ? "xsend.max"
                                                                   : "xsend.add";
    for (int c = 0; c < m_chunks; ++c) send(c, i, c % m_spec.directions == 0 ? kNext : kPrev, op);
    return m_out;
  }

 private:
  static std::string frag(int c) { return fmt::format("s{}", kFirstFragmentReg + c); }
  void line(const std::string& s) { m_out += "  " + s + "\n"; }
  void label(const std::string& s) { m_out += m_spec.label_prefix + s + ":\n"; }
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
  void wrap_down(const std::string& r, int d) {
    line(fmt::format("sli {}, {}", kTmp, d));
    line(fmt::format("sseq {}, {}, {}", kTmp, r, kTmp));
    line(fmt::format("smuli {}, {}, {}", kTmp, kTmp, d));
    line(fmt::format("ssub {}, {}, {}", r, r, kTmp));
  }
  // r = r < 0 ? r + d : r   (r in -1..d-1)
  void wrap_up(const std::string& r, int d) {
    line(fmt::format("sslti {}, {}, 0", kTmp, r));
    line(fmt::format("smuli {}, {}, {}", kTmp, kTmp, d));
    line(fmt::format("sadd {}, {}, {}", r, r, kTmp));
  }

  // dst = floor(src / divisor) (src < 2^m_bits).
  void divide(const std::string& dst, const std::string& src, int divisor) {
    const Magic mg = magic(divisor, m_bits);
    line(fmt::format("smuli {}, {}, {}", dst, src, mg.m));
    line(fmt::format("sshri {}, {}, {}", dst, dst, mg.k));
  }

  // dst = (src + offset) mod d, for 0 <= src < d and 0 <= offset < d (dst may be src; uses kTmp
  // unless dst is kTmp, then s9).
  void plus_mod(const std::string& dst, const std::string& src, int offset, int d) {
    const char* tmp = dst == kTmp ? "s9" : kTmp;
    line(fmt::format("saddi {}, {}, {}", dst, src, offset));  // < 2d
    line(fmt::format("sslti {}, {}, {}", tmp, dst, d));       // 1 if already below d
    line(fmt::format("saddi {}, {}, -1", tmp, tmp));          // 0 or -1
    line(fmt::format("smuli {}, {}, {}", tmp, tmp, d));
    line(fmt::format("sadd {}, {}, {}", dst, dst, tmp));
  }

  // kCoord = a_i = (p / stride_i) mod d_i.
  void coordinate(int i) {
    const int d = dim(i), s = stride(i);
    if (s == 1)
      line(fmt::format("smov {}, {}", kCoord, kPid));
    else
      divide(kCoord, kPid, s);
    if (sub(i) > 1) {  // higher coordinates present: take the remainder
      divide(kTmp, kCoord, d);
      line(fmt::format("smuli {}, {}, {}", kTmp, kTmp, d));
      line(fmt::format("ssub {}, {}, {}", kCoord, kCoord, kTmp));
    }
  }

  // kCoord = a_i; kNext / kPrev = the processors at a_i + 1 / a_i - 1 (mod d_i) with the other
  // coordinates equal.
  void coordinate_and_neighbours(int i) {
    const int d = dim(i), s = stride(i);
    coordinate(i);
    line(fmt::format("saddi {}, {}, {}", kNext, kPid, s));  // a == d-1: back by (d-1) strides
    line(fmt::format("sli {}, {}", kTmp, d - 1));
    line(fmt::format("sseq {}, {}, {}", kTmp, kCoord, kTmp));
    line(fmt::format("smuli {}, {}, {}", kTmp, kTmp, d * s));
    line(fmt::format("ssub {}, {}, {}", kNext, kNext, kTmp));
    line(fmt::format("saddi {}, {}, {}", kPrev, kPid, -s));  // a == 0: on by (d-1) strides
    line(fmt::format("sli {}, 0", kTmp));
    line(fmt::format("sseq {}, {}, {}", kTmp, kCoord, kTmp));
    line(fmt::format("smuli {}, {}, {}", kTmp, kTmp, d * s));
    line(fmt::format("sadd {}, {}, {}", kPrev, kPrev, kTmp));
  }

  // Phase i's reduce-scatter: sub-segment a_i first, then round the dimension-i ring; afterwards
  // each direction's segment start moves to the kept sub-segment (the fragment register of that
  // direction's first chunk holds it: a_i - (d-1) = a_i + 1 forward, a_i + (d-1) = a_i - 1
  // backward).
  void reduce_scatter(int i) {
    coordinate_and_neighbours(i);
    for (int c = 0; c < m_chunks; ++c) line(fmt::format("smov {}, {}", frag(c), kCoord));
    ring(i, "rs", m_spec.combine == core::XCombine::Max ? "xsend.max" : "xsend.add");
    for (int d = 0; d < m_spec.directions; ++d) {
      line(fmt::format("smuli {}, {}, {}", kTmp, frag(d), sub(i)));
      line(fmt::format("sadd {}, {}, {}", kSegment[d], kSegment[d], kTmp));
    }
  }

  // Phase i's all-gather (phases in reverse): the segment start goes back to level i, and each
  // processor starts with the sub-segment it kept (a_i + 1 forward, a_i - 1 backward).
  void all_gather(int i) {
    coordinate_and_neighbours(i);
    const char* kept[2] = {"s7", "s8"};
    for (int d = 0; d < m_spec.directions; ++d) {
      line(fmt::format("saddi {}, {}, {}", kept[d], kCoord, d == 0 ? 1 : -1));
      if (d == 0)
        wrap_down(kept[d], dim(i));
      else
        wrap_up(kept[d], dim(i));
      line(fmt::format("smuli {}, {}, {}", kTmp, kept[d], sub(i)));
      line(fmt::format("ssub {}, {}, {}", kSegment[d], kSegment[d], kTmp));
    }
    for (int c = 0; c < m_chunks; ++c)
      line(fmt::format("smov {}, {}", frag(c), kept[c % m_spec.directions]));
    ring(i, "ag", "xsend");
  }

  // d_i - 1 supersteps round the dimension-i ring (as the ring all-reduce's ring_phase).
  void ring(int i, const std::string& name, const std::string& op) {
    const std::string at = fmt::format("{}{}", name, i);
    line(fmt::format("sli {}, {}", kSteps, dim(i) - 1));
    label(at);
    for (int c = 0; c < m_chunks; ++c) {
      send(c, i, c % m_spec.directions == 0 ? kNext : kPrev, op);
      if (!m_spec.split_phase) next_fragment(c, dim(i));
    }
    if (m_spec.split_phase) {
      line("xsync");
      for (int c = 0; c < m_chunks; ++c) next_fragment(c, dim(i));
      line("xwait");
    } else {
      line("sync");
    }
    line(fmt::format("loop {}, {}{}", kSteps, m_spec.label_prefix, at));
  }

  void next_fragment(int c, int d) {
    line(fmt::format("saddi {}, {}, {}", frag(c), frag(c), c % m_spec.directions == 0 ? -1 : 1));
    if (c % m_spec.directions == 0)
      wrap_up(frag(c), d);
    else
      wrap_down(frag(c), d);
  }

  // Sends sub-segment frag(c) of chunk c's segment to `to` with `op`: base fragments
  // [k0, k0 + M) with k0 = segment + f * M, M = sub(i); base fragment k starts at word
  // k*q + min(k, r) of the chunk (q, r: the chunk's length over n).
  void send(int c, int i, const std::string& to, const std::string& op) {
    const auto [cb, ce] = split_range(m_spec.words, m_chunks, c);
    const uint32_t n = static_cast<uint32_t>(m_spec.processors);
    const uint32_t q = (ce - cb) / n, r = (ce - cb) % n;
    const int m = sub(i);
    line(fmt::format("smuli s7, {}, {}", frag(c), m));
    line(fmt::format("sadd s7, s7, {}", kSegment[c % m_spec.directions]));  // k0
    line(fmt::format("sli s9, {}", r));
    line("smin s8, s7, s9");  // min(k0, r)
    line(fmt::format("saddi {}, s7, {}", kCoord, m));
    line(fmt::format("smin {}, {}, s9", kCoord, kCoord));  // min(k0 + M, r)
    line(fmt::format("ssub {}, {}, s8", kCoord, kCoord));
    line(fmt::format("saddi {}, {}, {}", kCoord, kCoord, static_cast<uint32_t>(m) * q));  // length
    line(fmt::format("smuli s7, s7, {}", q));
    line("sadd s7, s7, s8");
    line(fmt::format("saddi s7, s7, {}", m_spec.base + cb));  // address
    line(fmt::format("{} s7, s7, {}, {}", op, kCoord, to));
  }

  const CollectiveSpec& m_spec;
  std::vector<int> m_dims;
  int m_chunks;
  int m_bits = 0;  // every processor index < 2^m_bits
  std::string m_out;
};

}  // namespace

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

std::string torus_allreduce_asm(const CollectiveSpec& spec, const std::string& pid_line) {
  return TorusGen(spec).program(pid_line);
}

std::string torus_allreduce_step_asm(const CollectiveSpec& spec, const std::string& pid_line,
                                     int step) {
  return TorusGen(spec).step(pid_line, step);
}

std::vector<uint32_t> torus_allreduce_reference(const CollectiveSpec& spec,
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

}  // namespace tessera::compiler
