// THE equivalence test: the timed core and the functional interpreter end in bit-identical
// architectural state (registers, scalar/vector memory, HBM, flags, RNG, pc) on every program:
// random straight-line programs from isa::RandomBundleGenerator (sanitised so they terminate with
// addresses in range), random programs that exercise the FIFO units (there, when one faults, the
// other must fault at the same pc for the same reason), the examples, and a DMA-overlap program.
// Also: two timed runs give identical statistics JSON (determinism).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/fault.h"
#include "core_test_util.h"
#include "isa/random_bundle.h"

namespace tessera::core {
namespace {

using isa::Opcode;

bool is_branch(Opcode op) {
  return op == Opcode::BEQ || op == Opcode::BNE || op == Opcode::BLT || op == Opcode::BGE ||
         op == Opcode::BLTU || op == Opcode::BGEU || op == Opcode::JMP || op == Opcode::LOOP ||
         op == Opcode::HALT;
}

bool is_dma(Opcode op) {
  return op == Opcode::DMAHV || op == Opcode::DMAVH || op == Opcode::DMAHS || op == Opcode::DMASH ||
         op == Opcode::DMAHV2 || op == Opcode::DMAVH2;
}

bool uses_fifo_unit(Opcode op) {
  const isa::Unit u = isa::op_info(op).unit;
  return u == isa::Unit::Mxu || u == isa::Unit::Xu || u == isa::Unit::Rpu || u == isa::Unit::Eup;
}

uint32_t mod(int32_t x, int64_t m) {
  return static_cast<uint32_t>(((int64_t{x} % m) + m) % m);
}

// Rewrites one random instruction so the program stays in range and terminates. s0 and v0 are
// reserved (never written: zero), giving every memory op a zero base, stride and index.
isa::Instr sanitise(isa::Instr in, const CoreSpec& spec, bool keep_units) {
  // Branches go (straight-line code), as do 2-D DMAs (descriptors in random memory) and ops of
  // units other than those this test drives (e.g. adam.start, whose program lives in HBM).
  // xwait goes too: without a pending xsync exchange it faults at once.
  const bool other_unit = isa::op_info(in.op).unit == isa::Unit::Dma && !is_dma(in.op);
  if (is_branch(in.op) || in.op == Opcode::XWAIT || (!keep_units && uses_fifo_unit(in.op)) ||
      in.op == Opcode::DMAHV2 || in.op == Opcode::DMAVH2 || other_unit)
    return isa::Instr{};
  for (const isa::RegRef& r : isa::written_registers(in).view())
    if (r.index == 0 && r.file != isa::RegFile::Mask) in.d = 1;
  const int64_t rows = spec.vmem_rows() - spec.sublanes;
  switch (in.op) {
    case Opcode::SMTSR:
      in.imm = static_cast<int32_t>(isa::SpecialReg::NProc);
      break;
    case Opcode::SMFSR:
      if (in.imm == static_cast<int32_t>(isa::SpecialReg::CycleLo) ||
          in.imm == static_cast<int32_t>(isa::SpecialReg::CycleHi))
        in.imm = static_cast<int32_t>(isa::SpecialReg::Pid);
      break;
    case Opcode::SLD:
    case Opcode::SST:
      in.a = 0, in.imm = static_cast<int32_t>(mod(in.imm, spec.smem_words));
      break;
    case Opcode::VLD:
    case Opcode::VLDS:
    case Opcode::VLDX:
      in.a = 0, in.b = 0, in.imm = static_cast<int32_t>(mod(in.imm, rows));
      break;
    case Opcode::VST:
    case Opcode::VSTS:
    case Opcode::VSTX:
      in.b = 0, in.c = 0, in.imm = static_cast<int32_t>(mod(in.imm, rows));
      break;
    case Opcode::VSTM:
      in.b = 0, in.imm = static_cast<int32_t>(mod(in.imm, rows));
      break;
    case Opcode::DMAHV:
    case Opcode::DMAVH:
    case Opcode::DMAHS:
    case Opcode::DMASH:
      in.d = in.a = in.b = 0, in.c = static_cast<uint8_t>(in.c % spec.sync_flags);
      break;
    case Opcode::WAIT:
      in.imm = 0, in.a = static_cast<uint8_t>(in.a % spec.sync_flags);
      break;
    case Opcode::SIGNAL:
      in.a = static_cast<uint8_t>(in.a % spec.sync_flags);
      break;
    case Opcode::RSEGSUM:
      in.imm = 1 << mod(in.imm, 4);
      break;  // 1, 2, 4, 8 (<= lanes)
    default:
      break;
  }
  return in;
}

isa::Program random_terminating_program(uint64_t seed, const CoreSpec& spec, int bundles,
                                        bool keep_units) {
  isa::RandomBundleOptions o;
  o.scalar_regs = spec.scalar_regs;
  o.vector_regs = spec.vector_regs;
  o.mask_regs = spec.mask_regs;
  o.allow_halt = false;
  o.fill_percent = 60;
  isa::RandomBundleGenerator gen(seed, o);
  isa::Program p;
  for (int i = 0; i < bundles; ++i) {
    isa::Bundle b = gen.next();
    for (isa::Instr& in : b.slot) in = sanitise(in, spec, keep_units);
    p.code.push_back(b);
  }
  isa::Bundle halt;
  halt[isa::Slot::S0] = isa::Instr{Opcode::HALT};
  p.code.push_back(halt);
  auto segment = [&](isa::Space space, uint64_t at, int words) {
    isa::DataSegment s{space, at, {}};
    for (int k = 0; k < words; ++k) s.words.push_back(static_cast<uint32_t>(gen.next_u64()));
    p.data.push_back(std::move(s));
  };
  segment(isa::Space::Smem, 0, 256);
  segment(isa::Space::Vmem, 0, 64 * spec.lanes);
  segment(isa::Space::Hbm, 0, 256);
  p.index = static_cast<uint32_t>(seed);
  return p;
}

struct Outcome {
  bool faulted = false;
  int64_t pc = 0;
  std::string why;
};

template <typename C>
Outcome run(C& c) {
  Outcome o;
  try {
    c.run();
  } catch (const SimFault& f) {
    o.faulted = true, o.pc = f.pc(), o.why = f.why();
  }
  return o;
}

// Runs both interpreters; returns whether the program completed.
bool expect_equivalent(const CoreSpec& spec, const isa::Program& p, const std::string& name) {
  FunctionalCore f(spec, p);
  Core t(spec, p);
  const Outcome of = run(f), ot = run(t);
  EXPECT_EQ(of.faulted, ot.faulted) << name << ": " << of.why << " | " << ot.why;
  if (of.faulted || ot.faulted) {
    EXPECT_EQ(of.pc, ot.pc) << name;
    EXPECT_EQ(of.why, ot.why) << name;
    if (of.faulted && !ot.faulted) ADD_FAILURE() << name << ": " << of.why;
    return false;
  }
  EXPECT_EQ(diff_architectural_state(f.state(), t.state()), "") << name;
  return true;
}

TEST(Equivalence, RandomStraightLinePrograms) {
  const CoreSpec specs[] = {test::small_spec(),
                            test::small_spec({{"vector", {{"sublanes", 4}, {"regs", 16}}},
                                              {"latency", {{"vector_add", 3}}}})};
  int completed = 0;
  for (const CoreSpec& spec : specs)
    for (uint64_t seed = 1; seed <= 150; ++seed)
      completed += expect_equivalent(spec, random_terminating_program(seed, spec, 60, false),
                                     "seed " + std::to_string(seed));
  EXPECT_EQ(completed, 300);  // sanitised programs never fault
}

TEST(Equivalence, RandomProgramsWithFifoUnitsAgreeOnStateOrOnTheirFault) {
  const CoreSpec spec = test::small_spec();
  int completed = 0, faulted = 0;
  for (uint64_t seed = 1000; seed < 1300; ++seed) {
    const bool ok = expect_equivalent(
        spec, random_terminating_program(seed, spec, 2 + static_cast<int>(seed % 30), true),
        "seed " + std::to_string(seed));
    (ok ? completed : faulted) += 1;
  }
  EXPECT_GT(faulted, 0);
  EXPECT_GT(completed, 0);
}

TEST(Equivalence, DefaultMachineRandomPrograms) {
  const CoreSpec spec = test::default_spec();
  for (uint64_t seed = 7; seed < 17; ++seed)
    EXPECT_TRUE(expect_equivalent(spec, random_terminating_program(seed, spec, 40, false),
                                  "seed " + std::to_string(seed)));
}

TEST(Equivalence, DmaOverlappedWithComputeAndUnits) {
  const CoreSpec spec = test::small_spec({{"dma", {{"latency", 7}, {"queue", 2}}}});
  std::string text = ".hbm 0\n.word ";
  for (int i = 0; i < 256; ++i) text += (i ? ", " : "") + std::to_string(i * 3 + 1);
  text += R"(
  sli s1, 0 ;; sli s2, 64
  sli s3, 0 ;; sli s4, 4
  dma.hv s3, s1, s2, 1                    // words 0..63 -> vmem rows 0..7
top:
  wait 1, 1
  vld v1, [s3+0] ;; saddi s1, s1, 64
  eexp v1 ;; vlaneid v2 ;; saddi s3, s3, 64
  rsum v1 ;; vadd.f32 v3, v1, v1
  dma.hv s3, s1, s2, 1
  epop v4 ;; xpush v3
  rpop v5 ;; xpush v3
  vst v4, [s3+100]
  vst v5, [s3+104] ;; xpush v3
  xpush v3
  xpop v6
  xpop v7 ;; mlw v6
  xpop v8 ;; mlw v7
  xpop v9 ;; mlw v8
  mlw v9
  mflip
  mmul v1
  mpop v10
  vst v10, [s3+108]
  loop s4, top
  wait 1, 1
  halt
)";
  auto c = test::run_both(spec, text);
  EXPECT_GT(c->stall_cycles(StallCause::SyncWait), 0);
}

std::vector<std::filesystem::path> example_programs() {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path dir = std::filesystem::path(TESSERA_SOURCE_DIR) / "examples";
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".s") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Equivalence, EveryExampleProgram) {
  const CoreSpec spec =
      load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  for (const auto& path : example_programs()) {
    isa::AsmOptions o;
    const isa::Program p = isa::assemble_file(path.string(), o);
    EXPECT_TRUE(expect_equivalent(spec, p, path.filename().string())) << path;
  }
}

TEST(Determinism, TwoTimedRunsGiveIdenticalStatistics) {
  const CoreSpec spec = test::small_spec();
  for (uint64_t seed : {3u, 4u}) {
    const isa::Program p = random_terminating_program(seed, spec, 80, false);
    Core a(spec, p), b(spec, p);
    a.run();
    b.run();
    EXPECT_EQ(a.stats().to_json().dump(), b.stats().to_json().dump());
    EXPECT_GT(a.cycles(), 0);
  }
  for (const auto& path : example_programs()) {
    const CoreSpec big =
        load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
    const isa::Program p = isa::assemble_file(path.string());
    Core a(big, p), b(big, p);
    a.run();
    b.run();
    EXPECT_EQ(a.stats().to_json().dump(), b.stats().to_json().dump()) << path;
  }
}

}  // namespace
}  // namespace tessera::core
