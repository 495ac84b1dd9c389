#include "compiler/adam_programs.h"

#include <array>
#include <bit>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/codegen.h"
#include "compiler/kernels.h"
#include "isa/adam_isa.h"
#include "numerics/adam.h"
#include "numerics/eup.h"

namespace tessera::compiler {

namespace {

using isa::AdamInstr;
using isa::AdamOp;
using isa::Opcode;

int64_t align(int64_t x) {
  return (x + 1023) / 1024 * 1024;
}

AdamInstr unit_op(AdamOp op, int a = 0, int b = 0, int64_t imm = 0) {
  return AdamInstr{op, static_cast<uint8_t>(a), static_cast<uint8_t>(b),
                   static_cast<uint32_t>(imm)};
}

// INSTRUCTION_IO of the whole program, then `body`; encoded.
std::vector<uint64_t> with_iio(const std::vector<AdamInstr>& body) {
  std::vector<uint64_t> out{isa::adam_encode(unit_op(AdamOp::IIO, 0, 0, 1 + body.size()))};
  for (const AdamInstr& in : body) out.push_back(isa::adam_encode(in));
  return out;
}

// Index of the next instruction of `body` (the IIO is instruction 0).
int64_t next_index(const std::vector<AdamInstr>& body) {
  return 1 + static_cast<int64_t>(body.size());
}

// Sets a2, a3 to theta and g, then one step (MOMENT_ESTIMATE) over every block; returns the index
// of the step's first instruction.
int64_t block_loop(std::vector<AdamInstr>& body, const AdamLayout& l) {
  body.push_back(unit_op(AdamOp::SETA, 2, 0, l.theta));
  body.push_back(unit_op(AdamOp::SETA, 3, 0, l.g));
  const int64_t step = next_index(body);
  body.push_back(unit_op(AdamOp::MEST));
  const int64_t block = next_index(body);
  body.push_back(unit_op(AdamOp::DIO, 2, 3));
  body.push_back(unit_op(AdamOp::XFERIN));
  body.push_back(unit_op(AdamOp::MUPD));
  body.push_back(unit_op(AdamOp::XFEROUT));
  body.push_back(unit_op(AdamOp::PUPD));
  body.push_back(unit_op(AdamOp::DBIO, 2));
  body.push_back(unit_op(AdamOp::BNEXT, 0, 0, block));
  return step;
}

// HYPERPARAMETER_IO and ASSIGN (m = v = 0, t = 0, the spill area).
void init_unit(std::vector<AdamInstr>& body, const AdamLayout& l) {
  body.push_back(unit_op(AdamOp::SETA, 0, 0, l.hyper));
  body.push_back(unit_op(AdamOp::HPIO, 0));
  body.push_back(unit_op(AdamOp::SETA, 1, 0, l.spill));
  body.push_back(unit_op(AdamOp::ASSIGN, 1, 0, l.n));
}

}  // namespace

AdamLayout adam_layout(int64_t n, int64_t base) {
  AdamLayout l;
  l.n = n;
  l.program = align(base);
  l.hyper = l.program + 128;
  l.theta = align(l.hyper + core::kAdamHyperWords);
  l.g = align(l.theta + n);
  l.spill = align(l.g + n);
  l.m = align(l.spill + 2 * n);
  l.v = align(l.m + n);
  return l;
}

std::vector<uint64_t> adam_unit_init_program(const AdamLayout& l) {
  std::vector<AdamInstr> body;
  init_unit(body, l);
  body.push_back(unit_op(AdamOp::HALT));
  return with_iio(body);
}

std::vector<uint64_t> adam_unit_step_program(const AdamLayout& l) {
  std::vector<AdamInstr> body;
  block_loop(body, l);
  body.push_back(unit_op(AdamOp::HALT));
  return with_iio(body);
}

std::vector<uint64_t> adam_unit_solve_program(const AdamLayout& l) {
  std::vector<AdamInstr> body;
  init_unit(body, l);
  const int64_t step = block_loop(body, l);
  const int64_t done = next_index(body) + 2;
  body.push_back(unit_op(AdamOp::CCHECK, 0, 0, done));
  body.push_back(unit_op(AdamOp::ILOOP, 0, 0, step));
  body.push_back(unit_op(AdamOp::HALT));
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

isa::Program adam_start_program(int64_t program, int flag) {
  static const core::CoreSpec spec;
  Codegen cg(spec, false);
  HeldRegs regs(1, spec.scalar_regs - 1);
  const int at = regs.take();
  cg.put(Opcode::SLI, at, 0, 0, 0, static_cast<int32_t>(program));
  cg.put(Opcode::ADAMSTART, 0, at, 0, flag);
  cg.put(Opcode::WAIT, 0, flag, 0, 0, 1);
  isa::Program p;
  p.code = cg.em().finish();
  return p;
}

namespace {

constexpr int kChunkVregs = 8;  // vregs per chunk (a multiple of kGroups)
constexpr int kGroups = 4;      // vregs computed interleaved
constexpr int kRing = 4;        // chunk buffers
constexpr int kAhead = 2;       // chunks loaded ahead of the compute: a reload reuses the buffer
                                // stored kRing - kAhead iterations earlier (its store has landed)

// Vector registers: group j's six working registers v[6j .. 6j+5] (G M V T X Y below), the
// broadcast constants v24..v31.
constexpr AdamConstRegs kConst{24, 26, 25, 27, 28, 31, 30, 29};
enum Role { G, M, V, T, X, Y };
// The register role of each new value of emit_adam_update, in its order: the group's update runs
// in its six registers, each value overwriting one that is dead by then.
constexpr std::array<Role, 20> kValueRole = {X, Y, M, X, Y, Y, V, X, X, G,
                                             T, Y, G, G, X, Y, G, V, V, G};

struct VecLayout {
  int64_t rows_per_array;  // kChunkVregs * sublanes
  int64_t lanes;
  int64_t row(int buf, int arr) const { return (buf * 4 + arr) * rows_per_array; }  // g m v th
  int64_t word(int buf, int arr) const { return row(buf, arr) * lanes; }
};

// One group's instructions for the vreg at row offset `off` of buffer `buf`: load g, m, v,
// theta, the update (storing m and v as soon as they are final), store theta.
std::vector<isa::Instr> group_code(int j, const VecLayout& vl, int buf, int64_t off) {
  const auto reg = [j](Role r) { return 6 * j + r; };
  std::vector<isa::Instr> out;
  const auto op = [&out](Opcode o, int d, int a, int b, int c, int32_t imm) {
    isa::Instr in;
    in.op = o;
    in.d = static_cast<uint8_t>(d), in.a = static_cast<uint8_t>(a);
    in.b = static_cast<uint8_t>(b), in.c = static_cast<uint8_t>(c);
    in.imm = imm;
    out.push_back(in);
  };
  const auto row = [&](int arr) { return static_cast<int32_t>(vl.row(buf, arr) + off); };
  for (int arr = 0; arr < 4; ++arr)
    op(Opcode::VLD, reg(std::array{G, M, V, T}[arr]), kRegZero, 0, 0, row(arr));
  size_t value = 0;
  const VectorCode code{[&] { return reg(kValueRole.at(value++)); },
                        [&](Opcode o, int d, int a, int b, int c) { op(o, d, a, b, c, 0); }};
  emit_adam_update(code, kConst, reg(T), reg(M), reg(V), reg(G), [&](int m, int v) {
    op(Opcode::VST, 0, m, kRegZero, 0, row(1));
    op(Opcode::VST, 0, v, kRegZero, 0, row(2));
  });
  op(Opcode::VST, 0, reg(T), kRegZero, 0, row(3));
  return out;
}

// The scalar registers of the program.
struct StepRegs {
  explicit StepRegs(HeldRegs& r)
      : base{r.take(), r.take(), r.take(), r.take()},
        chunk(r.take()),
        left(r.take()),
        offset(r.take()),
        load_left(r.take()),
        load_offset(r.take()),
        count(r.take()),
        vmem(r.take()),
        hbm(r.take()),
        pending{r.take(), r.take(), r.take(), r.take()} {}
  int base[4];                 // HBM words of g, m, v, theta
  int chunk;                   // words per chunk
  int left, offset;            // elements left to compute / offset of the chunk computed next
  int load_left, load_offset;  // the same for the loads
  int count;                   // words of the chunk at hand
  int vmem, hbm;               // DMA addresses
  int pending[kRing];          // 1 while a store of that buffer is in flight
};

class VectorStep {
 public:
  VectorStep(Codegen& cg, const StepRegs& r, const VecLayout& vl) : m_cg(cg), m_r(r), m_vl(vl) {}

  // DMA the chunk at HBM offset `off` (a register) of `count` words between buffer `buf` and
  // HBM: loads g m v th, or stores m v th.
  void dma_chunk(int buf, bool load, int off, int flag) {
    for (int a = load ? 0 : 1; a < 4; ++a) {
      m_cg.put(Opcode::SLI, m_r.vmem, 0, 0, 0, static_cast<int32_t>(m_vl.word(buf, a)));
      m_cg.join(Opcode::SADD, m_r.hbm, m_r.base[a], off);
      if (load)
        m_cg.put(Opcode::DMAHV, m_r.vmem, m_r.hbm, m_r.count, flag);
      else
        m_cg.put(Opcode::DMAVH, m_r.hbm, m_r.vmem, m_r.count, flag);
    }
  }

  // Loads the next chunk into buffer b unless every chunk is loaded (then branches to `skip`),
  // after waiting for a store of that buffer still in flight.
  void load_next(int b, int skip) {
    m_cg.put_branch(Opcode::BGE, kRegZero, m_r.load_left, skip);
    const int free = m_cg.label();
    m_cg.put_branch(Opcode::BEQ, m_r.pending[b], kRegZero, free);
    m_cg.put(Opcode::WAIT, 0, store_flag(b), 0, 0, 3);
    m_cg.bind(free);
    m_cg.put(Opcode::SLI, m_r.pending[b], 0, 0, 0, 0);
    m_cg.put(Opcode::SMIN, m_r.count, m_r.load_left, m_r.chunk);
    dma_chunk(b, true, m_r.load_offset, load_flag(b));
    m_cg.put(Opcode::SADD, m_r.load_offset, m_r.load_offset, m_r.chunk);
    m_cg.join(Opcode::SSUB, m_r.load_left, m_r.load_left, m_r.chunk);
  }

  // The chunk in buffer `buf`: kGroups vregs at a time, their instructions interleaved.
  void compute_chunk(int buf, int sublanes) {
    for (int round = 0; round < kChunkVregs / kGroups; ++round) {
      std::vector<std::vector<isa::Instr>> groups;
      for (int j = 0; j < kGroups; ++j)
        groups.push_back(
            group_code(j, m_vl, buf, static_cast<int64_t>(round * kGroups + j) * sublanes));
      for (size_t k = 0; k < groups[0].size(); ++k)
        for (const std::vector<isa::Instr>& g : groups) m_cg.put(g[k]);
    }
  }

  static int load_flag(int b) { return 1 + b; }
  static int store_flag(int b) { return 1 + kRing + b; }

 private:
  Codegen& m_cg;
  const StepRegs& m_r;
  const VecLayout& m_vl;
};

int32_t f32_bits(float x) {
  return std::bit_cast<int32_t>(x);
}

}  // namespace

isa::Program adam_vector_step_program(const core::CoreSpec& spec, const AdamLayout& l,
                                      const core::AdamHyper& h, int64_t t) {
  core::validate_adam_hyper(h);
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
  Codegen cg(spec, false);
  HeldRegs pool(1, spec.scalar_regs - 1);
  const StepRegs r(pool);
  VectorStep step(cg, r, vl);
  const auto li = [&](int reg, int64_t value, bool join) {
    if (join)
      cg.join(Opcode::SLI, reg, 0, 0, 0, static_cast<int32_t>(value));
    else
      cg.put(Opcode::SLI, reg, 0, 0, 0, static_cast<int32_t>(value));
  };
  const std::array<std::pair<int, float>, 8> constants = {
      {{kConst.b1, c.b1},
       {kConst.omb1, c.omb1},
       {kConst.b2, c.b2},
       {kConst.omb2, c.omb2},
       {kConst.eps, c.eps},
       {kConst.sqrt_bc2, s.sqrt_bc2},
       {kConst.rcp_sqrt_bc2, numerics::eup_rcp(s.sqrt_bc2)},
       {kConst.neg_step, -s.step}}};
  for (const auto& [reg, value] : constants) cg.put(Opcode::VBCASTI, reg, 0, 0, 0, f32_bits(value));
  li(kRegZero, 0, false);
  li(r.base[0], l.g, true);
  li(r.base[1], l.m, false);
  li(r.base[2], l.v, true);
  li(r.base[3], l.theta, false);
  li(r.chunk, chunk, true);
  li(r.left, l.n, false);
  li(r.offset, 0, true);
  li(r.load_left, l.n, false);
  li(r.load_offset, 0, true);
  for (int b = 0; b < kRing; ++b) li(r.pending[b], 0, false);
  for (int b = 0; b < kAhead; ++b) {
    const int primed = cg.label();
    step.load_next(b, primed);
    cg.bind(primed);
  }
  const int top = cg.label(), done = cg.label();
  for (int b = 0; b < kRing; ++b) {
    if (b == 0) cg.bind(top);
    const int skip = cg.label();
    step.load_next((b + kAhead) % kRing, skip);
    cg.bind(skip);
    cg.put(Opcode::WAIT, 0, VectorStep::load_flag(b), 0, 0, 4);
    step.compute_chunk(b, spec.sublanes);
    cg.put(Opcode::SMIN, r.count, r.left, r.chunk);
    step.dma_chunk(b, false, r.offset, VectorStep::store_flag(b));
    li(r.pending[b], 1, false);
    cg.put(Opcode::SADD, r.offset, r.offset, r.chunk);
    cg.join(Opcode::SSUB, r.left, r.left, r.chunk);
    cg.put_branch(Opcode::BGE, kRegZero, r.left, done);
  }
  cg.put_branch(Opcode::JMP, 0, 0, top);
  cg.bind(done);
  for (int b = 0; b < kRing; ++b) {
    const int drained = cg.label();
    cg.put_branch(Opcode::BEQ, r.pending[b], kRegZero, drained);
    cg.put(Opcode::WAIT, 0, VectorStep::store_flag(b), 0, 0, 3);
    cg.bind(drained);
  }
  isa::Program p;
  p.code = cg.em().finish();
  return p;
}

}  // namespace tessera::compiler
