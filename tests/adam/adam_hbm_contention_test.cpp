// The Adam unit's DMA path and the core's DMA engine share the HBM data path (adam_launcher.h):
// whoever issues first keeps its cycles, the other streams around them. Values are unaffected
// (the timed core's values equal the functional interpreter's: the equivalence tests).
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "adam_test_util.h"
#include "compiler/adam_programs.h"
#include "core/core.h"
#include "isa/adam_isa.h"
#include "isa/assembler.h"

namespace tessera::core {
namespace {

using compiler::adam_layout;
using compiler::adam_program_segment;
using compiler::adam_unit_init_program;
using compiler::adam_unit_step_program;
using compiler::AdamLayout;

using adam_test::small_spec;

constexpr int64_t kN = 100000;          // parameters: 1.2 MB per step through the unit's path
constexpr int64_t kDmaWords = 1 << 20;  // the core's DMA: 4 MB
constexpr int64_t kMark = 100;          // smem word: cycle after the core's DMA wait

CoreSpec spec() {
  return small_spec(8192, 64 << 20);
}

// init on the unit; then, in `order`, the step on the unit (flag 3) and/or a DMA (flag 1), in one
// bundle each; the cycle after the DMA's wait goes to smem[kMark].
isa::Program program(bool unit, bool dma, bool dma_first) {
  const AdamLayout l = adam_layout(kN, 1 << 22);
  std::string text = fmt::format("sli s1, {}\nsli s2, {}\nadam.start s1, 2\nwait 2, 1\n", l.program,
                                 l.program + 256);
  text += "sli s10, 0\nsli s11, 0\n" + fmt::format("sli s12, {}\n", kDmaWords);
  const std::string start_unit = unit ? "adam.start s2, 3\n" : "";
  const std::string start_dma = dma ? "dma.hv s10, s11, s12, 1\n" : "";
  text += dma_first ? start_dma + start_unit : start_unit + start_dma;
  if (dma) text += fmt::format("wait 1, 1\nsmfsr s20, %cycle_lo\nsst s20, [s0+{}]\n", kMark);
  if (unit) text += "wait 3, 1\n";
  isa::Program p = isa::assemble(text + "halt\n", "<contention>");
  const auto words = adam_hyper_words(AdamHyper{});
  p.data.push_back({isa::Space::Hbm, static_cast<uint64_t>(l.hyper),
                    std::vector<uint32_t>(words.begin(), words.end())});
  p.data.push_back(adam_program_segment(adam_unit_init_program(l), l.program));
  p.data.push_back(adam_program_segment(adam_unit_step_program(l), l.program + 256));
  std::mt19937 rng(3);
  for (int64_t base : {l.theta, l.g}) {
    const std::vector<float> x = adam_test::random_vector(rng, kN, 1.0f);
    isa::DataSegment d{isa::Space::Hbm, static_cast<uint64_t>(base), std::vector<uint32_t>(kN)};
    std::memcpy(d.words.data(), x.data(), 4 * kN);
    p.data.push_back(d);
  }
  return p;
}

struct Outcome {
  int64_t unit_step_cycles = 0, dma_done = 0;
  std::vector<uint32_t> theta;
};

Outcome run(bool unit, bool dma, bool dma_first) {
  const isa::Program p = program(unit, dma, dma_first);
  Core c(spec(), p);
  const int64_t init_cycles = [&] {
    Core i(spec(), program(false, false, false));
    i.run();
    return i.machine().adam().stats().busy_cycles;
  }();
  c.run();
  Outcome r{c.machine().adam().stats().busy_cycles - init_cycles,
            static_cast<int64_t>(c.state().smem[kMark]), std::vector<uint32_t>(kN)};
  c.state().hbm.read_block(adam_layout(kN, 1 << 22).theta, r.theta.data(), kN);
  return r;
}

int64_t path_cycles(int64_t bytes, double rate) {
  return static_cast<int64_t>(static_cast<double>(bytes) / rate);
}

TEST(AdamHbmContention, AUnitRunStartedAfterACoreDmaWaitsForItsData) {
  const CoreSpec s = spec();
  const Outcome alone = run(true, false, false), both = run(true, true, true);
  EXPECT_GE(both.unit_step_cycles, alone.unit_step_cycles +
                                       path_cycles(4 * kDmaWords, s.hbm_bytes_per_cycle) -
                                       s.adam.dma_latency);
}

TEST(AdamHbmContention, ACoreDmaIssuedDuringAUnitRunStreamsAroundIt) {
  const CoreSpec s = spec();
  const Outcome alone = run(false, true, false), both = run(true, true, false);
  EXPECT_GE(both.dma_done, alone.dma_done + path_cycles(12 * kN, s.adam.dma_bytes_per_cycle) / 2);
  const Outcome unit_alone = run(true, false, false);
  EXPECT_EQ(both.unit_step_cycles,
            unit_alone.unit_step_cycles);  // the unit issued first keeps its cycles
  EXPECT_EQ(both.theta, unit_alone.theta);
}

}  // namespace
}  // namespace tessera::core
