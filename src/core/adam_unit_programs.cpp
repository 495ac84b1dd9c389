#include "core/adam_unit_programs.h"

#include <bit>

#include <fmt/format.h>

#include "common/error.h"
#include "numerics/adam.h"
#include "numerics/eup.h"

namespace tessera::core {

namespace {

int64_t align(int64_t x) {
  return (x + 1023) / 1024 * 1024;
}

// Prefixes "iio <count>" to the body lines.
std::string with_iio(const std::vector<std::string>& body) {
  std::string out = fmt::format("iio {}\n", body.size() + 1);
  for (const auto& l : body) out += l + "\n";
  return out;
}

std::vector<std::string> block_loop(const AdamLayout& l) {
  return {fmt::format("seta a2, {}", l.theta),
          fmt::format("seta a3, {}", l.g),
          "step: mest",
          "blk: dio a2, a3",
          "xfer.in",
          "mupd",
          "xfer.out",
          "pupd",
          "dbio a2",
          "bnext blk"};
}

}  // namespace

AdamLayout adam_layout(int64_t n, int64_t base) {
  AdamLayout l;
  l.n = n;
  l.program = align(base);
  l.hyper = l.program + 128;
  l.theta = align(l.hyper + kAdamHyperWords);
  l.g = align(l.theta + n);
  l.spill = align(l.g + n);
  l.m = align(l.spill + 2 * n);
  l.v = align(l.m + n);
  return l;
}

std::string adam_unit_init_asm(const AdamLayout& l) {
  return with_iio({fmt::format("seta a0, {}", l.hyper), "hpio a0",
                   fmt::format("seta a1, {}", l.spill), fmt::format("assign a1, {}", l.n), "halt"});
}

std::string adam_unit_step_asm(const AdamLayout& l) {
  auto body = block_loop(l);
  body.push_back("halt");
  return with_iio(body);
}

std::string adam_unit_solve_asm(const AdamLayout& l) {
  std::vector<std::string> body = {fmt::format("seta a0, {}", l.hyper), "hpio a0",
                                   fmt::format("seta a1, {}", l.spill),
                                   fmt::format("assign a1, {}", l.n)};
  for (const auto& s : block_loop(l)) body.push_back(s);
  body.push_back("ccheck done");
  body.push_back("iloop step");
  body.push_back("done: halt");
  return with_iio(body);
}

isa::DataSegment adam_program_segment(const std::vector<uint64_t>& words, int64_t addr) {
  isa::DataSegment s;
  s.space = isa::Space::Hbm;
  s.address = static_cast<uint64_t>(addr);
  for (uint64_t w : words) {
    s.words.push_back(static_cast<uint32_t>(w));
    s.words.push_back(static_cast<uint32_t>(w >> 32));
  }
  return s;
}

std::string adam_start_asm(int64_t program, int flag) {
  return fmt::format("sli s1, {}\nadam.start s1, {}\nwait {}, 1\nhalt\n", program, flag, flag);
}

namespace {

constexpr int kChunkVregs = 8;  // vregs per chunk (a multiple of 4)
constexpr int kRing = 4;        // chunk buffers
constexpr int kAhead = 2;       // chunks loaded ahead of the compute: a reload reuses the buffer
                                // stored kRing - kAhead iterations earlier (its store has landed)

// One group's ops (one vreg of elements); registers G M V T X Y = v[6j..6j+5], constants v24..v31.
std::vector<std::string> group_ops(int j, int64_t rg, int64_t rm, int64_t rv, int64_t rt) {
  const auto r = [j](int k) { return fmt::format("v{}", 6 * j + k); };
  const std::string G = r(0), M = r(1), V = r(2), T = r(3), X = r(4), Y = r(5);
  const std::string B1 = "v24", OMB1 = "v25", B2 = "v26", OMB2 = "v27", EPS = "v28", SBC = "v29",
                    YBC = "v30", NSTEP = "v31";
  return {
      fmt::format("vld {}, [s0+{}]", G, rg),
      fmt::format("vld {}, [s0+{}]", M, rm),
      fmt::format("vld {}, [s0+{}]", V, rv),
      fmt::format("vld {}, [s0+{}]", T, rt),
      fmt::format("vmul.f32 {}, {}, {}", X, B1, M),
      fmt::format("vmul.f32 {}, {}, {}", Y, OMB1, G),
      fmt::format("vadd.f32 {}, {}, {}", M, X, Y),
      fmt::format("vmul.f32 {}, {}, {}", X, B2, V),
      fmt::format("vmul.f32 {}, {}, {}", Y, OMB2, G),
      fmt::format("vmul.f32 {}, {}, {}", Y, Y, G),
      fmt::format("vadd.f32 {}, {}, {}", V, X, Y),
      fmt::format("vst {}, [s0+{}]", M, rm),
      fmt::format("vst {}, [s0+{}]", V, rv),
      fmt::format("esqrt {}", V),
      fmt::format("epop {}", X),
      // scaled = root / sqrt_bc2
      fmt::format("vmul.f32 {}, {}, {}", Y, X, YBC),
      fmt::format("vneg.f32 {}, {}", G, Y),
      fmt::format("vfma.f32 {}, {}, {}, {}", G, G, SBC, X),
      fmt::format("vfma.f32 {}, {}, {}, {}", X, G, YBC, Y),
      fmt::format("vadd.f32 {}, {}, {}", X, X, EPS),  // denom
      fmt::format("ercp {}", X),
      fmt::format("epop {}", Y),
      // ratio = m / denom
      fmt::format("vmul.f32 {}, {}, {}", G, M, Y),
      fmt::format("vneg.f32 {}, {}", V, G),
      fmt::format("vfma.f32 {}, {}, {}, {}", V, V, X, M),
      fmt::format("vfma.f32 {}, {}, {}, {}", G, V, Y, G),
      fmt::format("vmul.f32 {}, {}, {}", G, NSTEP, G),
      fmt::format("vadd.f32 {}, {}, {}", T, T, G),
      fmt::format("vst {}, [s0+{}]", T, rt),
  };
}

struct VecLayout {
  int64_t rows_per_array;  // kChunkVregs * sublanes
  int64_t lanes;
  int64_t row(int buf, int arr) const { return (buf * 4 + arr) * rows_per_array; }  // arr: g m v th
  int64_t word(int buf, int arr) const { return row(buf, arr) * lanes; }
};

void compute_chunk(std::string& out, const VecLayout& vl, int buf, int sublanes) {
  for (int round = 0; round < kChunkVregs / 4; ++round) {
    std::vector<std::vector<std::string>> groups;
    for (int j = 0; j < 4; ++j) {
      const int64_t off = static_cast<int64_t>(round * 4 + j) * sublanes;
      groups.push_back(group_ops(j, vl.row(buf, 0) + off, vl.row(buf, 1) + off,
                                 vl.row(buf, 2) + off, vl.row(buf, 3) + off));
    }
    for (size_t k = 0; k < groups[0].size(); ++k)
      for (int j = 0; j < 4; ++j) out += groups[static_cast<size_t>(j)][k] + "\n";
  }
}

// DMA the chunk at HBM offset `off` (register) of `words` (register) between buffer `buf` and
// HBM: loads g m v th (flag), or stores m v th.
void dma_chunk(std::string& out, const VecLayout& vl, int buf, bool load, const char* off,
               const char* words, int flag) {
  static constexpr const char* kBase[4] = {"s1", "s2", "s3", "s4"};
  for (int a = load ? 0 : 1; a < 4; ++a) {
    out += fmt::format("sli s10, {} ;; sadd s14, {}, {}\n", vl.word(buf, a), kBase[a], off);
    out += load ? fmt::format("dma.hv s10, s14, {}, {}\n", words, flag)
                : fmt::format("dma.vh s14, s10, {}, {}\n", words, flag);
  }
}

std::string f32_hex(float x) {
  return fmt::format("0x{:08x}", std::bit_cast<uint32_t>(x));
}

}  // namespace

std::string adam_vector_step_asm(const CoreSpec& spec, const AdamLayout& l, const AdamHyper& h,
                                 int64_t t) {
  validate_adam_hyper(h);
  if (h.weight_decay != 0)
    throw Error("adam vector-unit program", "weight decay is not supported by the baseline");
  if (l.n < 1 || t < 1) throw Error("adam vector-unit program", "needs n >= 1 and t >= 1");
  if (spec.vector_regs < 32 || spec.scalar_regs < 32)
    throw Error("adam vector-unit program", "needs 32 scalar and 32 vector registers");
  if (spec.sync_flags < 1 + 2 * kRing)
    throw Error("adam vector-unit program", fmt::format("needs {} sync flags", 1 + 2 * kRing));
  const VecLayout vl{static_cast<int64_t>(kChunkVregs) * spec.sublanes, spec.lanes};
  if (vl.row(kRing, 0) > spec.vmem_rows())
    throw Error("adam vector-unit program",
                fmt::format("vector memory too small for {} x 4 chunk buffers", kRing));
  const int64_t chunk = vl.rows_per_array * vl.lanes;
  const numerics::AdamConstants c = numerics::adam_constants(h.b1, h.b2, h.eps);
  const numerics::AdamStepScalars s = numerics::adam_step_scalars(h.lr, h.b1, h.b2, t);
  const auto load_flag = [](int b) { return 1 + b; };
  const auto store_flag = [](int b) { return 1 + kRing + b; };
  const auto pending = [](int b) { return fmt::format("s{}", 26 + b); };
  std::string o;
  o += fmt::format("// Adam step t = {} on the vector unit, n = {}, a ring of {} chunk buffers\n",
                   t, l.n, kRing);
  o += fmt::format("vbcasti v24, {}\nvbcasti v25, {}\nvbcasti v26, {}\nvbcasti v27, {}\n",
                   f32_hex(c.b1), f32_hex(c.omb1), f32_hex(c.b2), f32_hex(c.omb2));
  o += fmt::format("vbcasti v28, {}\nvbcasti v29, {}\nvbcasti v30, {}\nvbcasti v31, {}\n",
                   f32_hex(c.eps), f32_hex(s.sqrt_bc2), f32_hex(numerics::eup_rcp(s.sqrt_bc2)),
                   f32_hex(-s.step));
  o += fmt::format("sli s0, 0 ;; sli s1, {}\nsli s2, {} ;; sli s3, {}\nsli s4, {} ;; sli s22, {}\n",
                   l.g, l.m, l.v, l.theta, chunk);
  // s20/s21: elements left to compute / offset of the chunk computed next; s23/s24: the same for
  // loads; s26..: a store of that buffer is in flight.
  o += fmt::format("sli s20, {} ;; sli s21, 0\nsli s23, {} ;; sli s24, 0\n", l.n, l.n);
  for (int b = 0; b < kRing; ++b) o += fmt::format("sli {}, 0\n", pending(b));
  const auto load_next = [&](int b, const std::string& skip) {
    o += fmt::format("bge s0, s23, {}\n", skip);
    o += fmt::format("beq {}, s0, {}_free\nwait {}, 3\n{}_free: sli {}, 0\n", pending(b), skip,
                     store_flag(b), skip, pending(b));
    o += "smin s25, s23, s22\n";
    dma_chunk(o, vl, b, true, "s24", "s25", load_flag(b));
    o += "sadd s24, s24, s22 ;; ssub s23, s23, s22\n";
  };
  for (int b = 0; b < kAhead; ++b) {
    load_next(b, fmt::format("prime{}", b));
    o += fmt::format("prime{}:\n", b);
  }
  for (int b = 0; b < kRing; ++b) {
    o += fmt::format("loop{}:\n", b);
    load_next((b + kAhead) % kRing, fmt::format("skip{}", b));
    o += fmt::format("skip{}: wait {}, 4\n", b, load_flag(b));
    compute_chunk(o, vl, b, spec.sublanes);
    o += "smin s25, s20, s22\n";
    dma_chunk(o, vl, b, false, "s21", "s25", store_flag(b));
    o += fmt::format("sli {}, 1\nsadd s21, s21, s22 ;; ssub s20, s20, s22\nbge s0, s20, done\n",
                     pending(b));
  }
  o += "jmp loop0\ndone:\n";
  for (int b = 0; b < kRing; ++b)
    o += fmt::format("beq {}, s0, drained{}\nwait {}, 3\ndrained{}:\n", pending(b), b,
                     store_flag(b), b);
  o += "halt\n";
  return o;
}

}  // namespace tessera::core
