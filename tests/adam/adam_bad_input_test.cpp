// Bad hyperparameters, mismatched lengths, use before HYPERPARAMETER_IO, and
// malformed unit programs give clear errors or simulated faults.
#include <cmath>

#include <gtest/gtest.h>

#include "adam_test_util.h"
#include "cli/bench/adam_unit_session.h"
#include "common/error.h"
#include "compiler/adam_programs.h"
#include "core/core.h"
#include "core/fault.h"
#include "isa/adam_isa.h"
#include "isa/assembler.h"

namespace tessera::core {
namespace {

using compiler::adam_layout;
using compiler::adam_program_segment;
using compiler::adam_start_program;
using compiler::AdamLayout;

using adam_test::small_spec;
using bench::AdamUnitSession;

std::string session_error(AdamHyper h) {
  try {
    AdamUnitSession s(small_spec(), 10, h);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(AdamBadInput, HyperparametersOutOfRangeAreErrors_bad) {
  AdamHyper h;
  h.b1 = 1.0;
  EXPECT_EQ(session_error(h), "adam hyperparameters: beta1 = 1 outside [0, 1)");
  h = {}, h.b2 = -0.1;
  EXPECT_EQ(session_error(h), "adam hyperparameters: beta2 = -0.1 outside [0, 1)");
  h = {}, h.lr = -1e-3;
  EXPECT_EQ(session_error(h),
            "adam hyperparameters: alpha (learning rate) = -0.001 must be finite and >= 0");
  h = {}, h.eps = -1e-8;
  EXPECT_EQ(session_error(h), "adam hyperparameters: epsilon = -1e-08 must be finite and >= 0");
  h = {}, h.ct = std::nan("");
  EXPECT_EQ(session_error(h),
            "adam hyperparameters: convergence threshold = nan must be finite and >= 0");
}

// Runs a unit program (text) through the tensor core; returns the fault text or "".
std::string run_unit_program(const std::string& unit_asm, const AdamHyper* hyper_block = nullptr) {
  const CoreSpec spec = small_spec();
  const AdamLayout l = adam_layout(100, 4096);
  isa::Program p = adam_start_program(l.program);
  p.data.push_back(adam_program_segment(isa::adam_assemble(unit_asm), l.program));
  if (hyper_block) {
    std::array<uint32_t, kAdamHyperWords> w = adam_hyper_words(*hyper_block);
    p.data.push_back({isa::Space::Hbm, static_cast<uint64_t>(l.hyper),
                      std::vector<uint32_t>(w.begin(), w.end())});
  }
  try {
    Core c(spec, p);
    c.run();
  } catch (const SimFault& f) {
    return f.why();
  }
  return "";
}

TEST(AdamBadInput, UsingTheUnitBeforeHyperparameterIoFaults_bad) {
  EXPECT_EQ(run_unit_program("iio 3\nassign a0, 10\nhalt\n"),
            "adam unit: ASSIGN before HYPERPARAMETER_IO");
  EXPECT_EQ(run_unit_program("iio 3\nmest\nhalt\n"),
            "adam unit: MOMENT_ESTIMATE before HYPERPARAMETER_IO");
  EXPECT_EQ(run_unit_program("iio 3\nmupd\nhalt\n"),
            "adam unit: MOMENT_UPDATE before HYPERPARAMETER_IO");
  EXPECT_EQ(run_unit_program("iio 3\ndio a0, a1\nhalt\n"),
            "adam unit: DATA_IO before HYPERPARAMETER_IO");
}

TEST(AdamBadInput, AHyperparameterBlockOutOfRangeFaultsAtHyperparameterIo_bad) {
  const AdamLayout l = adam_layout(100, 4096);
  AdamHyper h;
  h.b2 = 1.5;
  EXPECT_EQ(run_unit_program(fmt::format("iio 4\nseta a0, {}\nhpio a0\nhalt\n", l.hyper), &h),
            "adam unit: HYPERPARAMETER_IO: beta2 = 1.5 outside [0, 1)");
}

TEST(AdamBadInput, MalformedProgramsFault_bad) {
  EXPECT_EQ(run_unit_program("halt\n"), "adam unit: instruction 0 must be INSTRUCTION_IO (iio)");
  EXPECT_EQ(run_unit_program("iio 1\n"),
            "adam unit: pc 1 outside the 1 instructions in the instruction cache");
  EXPECT_EQ(run_unit_program("iio 100000\n"),
            "adam unit: INSTRUCTION_IO of 100000 instructions; the instruction cache holds 1..256");
  EXPECT_EQ(run_unit_program("iio 2\niio 2\n"),
            "adam unit: INSTRUCTION_IO at instruction 1 (only instruction 0 may fetch)");
  AdamHyper h;
  const AdamLayout l = adam_layout(100, 4096);
  EXPECT_EQ(run_unit_program(fmt::format("iio 5\nseta a0, {}\nhpio a0\nmest\nhalt\n", l.hyper), &h),
            "adam unit: MOMENT_ESTIMATE before ASSIGN");
  EXPECT_EQ(
      run_unit_program(
          fmt::format("iio 6\nseta a0, {}\nhpio a0\nseta a1, 0xfffffff0\ndbio a1\nhalt\n", l.hyper),
          &h),
      "adam unit: DATABACK_IO before ASSIGN");
}

TEST(AdamBadInput, StartingOnZeroedMemoryFaults_bad) {
  isa::Program p = adam_start_program(8192);
  Core c(small_spec(), p);
  try {
    c.run();
    FAIL();
  } catch (const SimFault& f) {
    EXPECT_EQ(
        f.why(),
        "adam unit: adam instruction 0: invalid encoding 0x0000000000000000: unknown opcode 0");
  }
}

TEST(AdamBadInput, MismatchedThetaAndGradientLengthsAreErrors_bad) {
  AdamUnitSession s(small_spec(), 10, AdamHyper{});
  try {
    s.step(std::vector<float>(9, 0.0f));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "adam unit: theta has 10 elements but g has 9");
  }
  EXPECT_THROW(s.set_theta(std::vector<float>(11, 0.0f)), Error);
  try {
    s.solve([](const std::vector<float>&, int64_t) { return std::vector<float>(3, 1.0f); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "adam unit: theta has 10 elements but g has 3");
  }
}

TEST(AdamBadInput, ARunawayProgramFaultsInsteadOfHanging_bad) {
  AdamUnit u(small_spec());
  PagedMemory hbm(1 << 16);
  const auto words = isa::adam_assemble("iio 2\nx: jmp x\n");
  const isa::DataSegment seg = adam_program_segment(words, 0);
  hbm.write_block(0, seg.words.data(), static_cast<int64_t>(seg.words.size()));
  u.set_instruction_limit(1000);
  EXPECT_THROW(u.run(hbm, 0, 0), UnitFault);
}

}  // namespace
}  // namespace tessera::core
