// Loop rerolling: the rolled program computes what the straight-line one does, in fewer bundles,
// keeps live registers and the branches it did not roll.
#include "kernels/loop_roll.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/core.h"
#include "core/functional.h"
#include "isa/opcodes.h"
#include "kernels/bundle_builder.h"

namespace tessera::kernels {
namespace {

using isa::Opcode;

core::CoreSpec spec() {
  return core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
}

constexpr int kCopies = 100;

// A periodic stretch of kCopies copies, then `tail(bb, after)` from bundle `after` on. Copy k: load
// row 8k, store it at row 4096 + 8k, and store sli's value 5000 + 3k at smem word 100 + k (three
// distinct immediate steps, so a loop needs a counter and three induction registers).
template <class Tail>
std::vector<isa::Bundle> periodic_program(Tail tail) {
  BundleBuilder bb;
  bb.put(0, op_d_imm(Opcode::SLI, 0, 0));
  bb.put(0, op_d_imm(Opcode::SLI, 5, 77));
  for (int k = 0; k < kCopies; ++k) {
    const int64_t b = 1 + 2 * k;
    bb.put(b, op_d_a_imm(Opcode::VLD, 1, 0, 8 * k));
    bb.put(b, op_d_imm(Opcode::SLI, 9, 5000 + 3 * k));
    bb.put(b + 1, op_store(Opcode::VST, 1, 0, 4096 + 8 * k));
    bb.put(b + 1, op_store(Opcode::SST, 0, 9, 100 + k));  // sst s9, [s0+100+k]
  }
  tail(bb, int64_t{1 + 2 * kCopies});
  return bb.finish();
}

// s5 is set before the periodic stretch and read after it; s7 counts an explicit loop placed after
// it (a branch whose target must be renumbered).
std::vector<isa::Bundle> straight_program() {
  return periodic_program([](BundleBuilder& bb, int64_t after) {
    bb.put(after, op_store(Opcode::SST, 0, 5, 7));
    bb.put(after, op_d_imm(Opcode::SLI, 6, 3));
    bb.put(after + 1, op_d_a_imm(Opcode::SADDI, 7, 7, 1));
    isa::Instr loop = op_a(Opcode::LOOP, 6);
    loop.imm = static_cast<int32_t>(after + 1);
    bb.put(after + 1, loop);
  });
}

isa::Program with_data(std::vector<isa::Bundle> code) {
  isa::Program p;
  p.code = std::move(code);
  std::vector<uint32_t> rows(static_cast<size_t>(8 * kCopies * 128));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint32_t>(i * 2654435761u);
  p.data.push_back(isa::DataSegment{isa::Space::Vmem, 0, rows});
  return p;
}

void expect_same_results(const core::ArchState& a, const core::ArchState& b) {
  for (int64_t w = 0; w < (4096 + 8 * kCopies) * 128; ++w)
    ASSERT_EQ(a.vmem[w], b.vmem[w]) << "vmem word " << w;
  for (int64_t w = 0; w < 200; ++w) ASSERT_EQ(a.smem[w], b.smem[w]) << "smem word " << w;
  for (int r : {0, 5, 6, 7, 9}) EXPECT_EQ(a.sreg(r), b.sreg(r)) << "s" << r;
}

// Runs `original` on the functional interpreter and `rolled` on both interpreters; `same`
// compares the first run's state with each of the others.
template <class Same>
void expect_rolled_runs_the_same(const core::CoreSpec& s, const isa::Program& original,
                                 const isa::Program& rolled, Same same) {
  core::FunctionalCore ref(s, original);
  ref.run();
  core::FunctionalCore fun(s, rolled);
  fun.run();
  same(ref.state(), fun.state());
  core::Core timed(s, rolled);
  timed.run();
  same(ref.state(), timed.state());
}

TEST(LoopRoll, RolledProgramComputesTheSameOnBothInterpretersInFewerBundles) {
  const core::CoreSpec s = spec();
  const std::vector<isa::Bundle> code = straight_program();
  const RolledCode rolled = roll_loops(code, s);
  EXPECT_EQ(rolled.loops, 1);
  EXPECT_LT(rolled.code.size() + 100, code.size());

  core::FunctionalCore ref(s, with_data(code));
  ref.run();
  EXPECT_EQ(ref.state().sreg(7), 3u);
  EXPECT_EQ(ref.state().smem[7], 77u);
  core::FunctionalCore fun(s, with_data(rolled.code));
  fun.run();
  expect_same_results(ref.state(), fun.state());
  core::Core timed(s, with_data(rolled.code));
  timed.run();
  expect_same_results(ref.state(), timed.state());
}

TEST(LoopRoll, LoopRegistersAvoidEveryRegisterTheCodeStillNeeds) {
  const core::CoreSpec s = spec();
  const RolledCode rolled = roll_loops(straight_program(), s);
  for (const isa::Bundle& b : rolled.code)
    for (const isa::Instr& in : b.slot)
      if (in.op == Opcode::LOOP && in.a != 6) {
        for (int live : {0, 1, 5, 6, 7, 9}) EXPECT_NE(in.a, live);
      }
}

// The loop registers of the one loop of `code` (counter first, then the induction registers in
// ascending order), or {} without a loop.
std::vector<int> loop_registers(const std::vector<isa::Bundle>& code) {
  const RolledCode rolled = roll_loops(code, spec());
  std::vector<int> counter, induction;
  for (const isa::Bundle& b : rolled.code)
    for (const isa::Instr& in : b.slot) {
      if (in.op == Opcode::LOOP) counter.push_back(in.a);
      if (in.op == Opcode::SADDI && in.d == in.a) induction.push_back(in.d);
    }
  if (rolled.loops != 1) return {};
  std::sort(induction.begin(), induction.end());
  counter.insert(counter.end(), induction.begin(), induction.end());
  return counter;
}

// A register is free for the loop after the region only if its next reference writes it without
// reading it, or a halt comes first; a branch out of the scanned code before either keeps it.
TEST(LoopRoll, LoopRegistersAreDeadAfterTheRegion) {
  auto sst = [](int reg) { return op_store(Opcode::SST, 0, reg, 7); };  // reads reg
  auto sli = [](int reg) { return op_d_imm(Opcode::SLI, reg, 1); };     // writes reg
  // s31 is read, s30..s27 written; every other register is next met past a jump out.
  auto tail = [&](bool s27_before_jump) {
    return periodic_program([&](BundleBuilder& bb, int64_t after) {
      bb.put(after, sst(31));
      bb.put(after, sli(30));
      bb.put(after + 1, sli(29));
      bb.put(after + 1, sli(28));
      bb.put(s27_before_jump ? after + 2 : after + 4, sli(27));
      isa::Instr jmp = op_none(Opcode::JMP);
      jmp.imm = static_cast<int32_t>(after + 5);
      bb.put(after + 3, jmp);
      bb.put(after + 5, sli(26));
      bb.put(after + 5, op_none(Opcode::HALT));
    });
  };
  EXPECT_EQ(loop_registers(tail(true)), (std::vector<int>{30, 27, 28, 29}));
  EXPECT_EQ(loop_registers(tail(false)), std::vector<int>{});  // three free registers only
  // After a halt nothing is live: s31, read past it, is free.
  const std::vector<isa::Bundle> halted = periodic_program([&](BundleBuilder& bb, int64_t after) {
    bb.put(after, op_none(Opcode::HALT));
    bb.put(after + 1, sst(31));
  });
  EXPECT_EQ(loop_registers(halted), (std::vector<int>{31, 28, 29, 30}));
}

// Two levels of repetition: kOuter copies of (kInner copies of a load and a store, then a scalar
// store of an sli value), each level with its own immediate steps.
constexpr int kOuter = 12, kInner = 100;

std::vector<isa::Bundle> two_level_program() {
  BundleBuilder bb;
  bb.put(0, op_d_imm(Opcode::SLI, 0, 0));
  int64_t b = 1;
  for (int k = 0; k < kOuter; ++k) {
    for (int j = 0; j < kInner; ++j, b += 2) {
      const int row = kInner * k + j;
      bb.put(b, op_d_a_imm(Opcode::VLD, 1, 0, 8 * row));
      bb.put(b + 1, op_store(Opcode::VST, 1, 0, 10000 + 16 * row));
    }
    bb.put(b, op_d_imm(Opcode::SLI, 9, 5000 + 3 * k));
    bb.put(b + 1, op_store(Opcode::SST, 0, 9, 100 + k));
    b += 2;
  }
  return bb.finish();
}

// Outer loops hold inner ones: fewer bundles than one level gives (a loop over the outer copies
// with straight inner copies), the same results.
TEST(LoopRoll, NestedRollingRollsLoopsIntoOuterLoops) {
  const core::CoreSpec s = spec();
  const std::vector<isa::Bundle> code = two_level_program();
  RollOptions nested;
  nested.nested = true;
  const RolledCode one = roll_loops(code, s);
  const RolledCode two = roll_loops(code, s, nested);
  EXPECT_GE(one.loops, 1);
  EXPECT_LT(two.code.size() * 2, one.code.size());
  // Some loop's body holds another loop.
  bool inside = false;
  for (size_t x = 0; x < two.code.size(); ++x)
    for (const isa::Instr& in : two.code[x].slot)
      if (in.op == Opcode::LOOP)
        for (size_t y = static_cast<size_t>(in.imm); y < x; ++y)
          for (const isa::Instr& inner : two.code[y].slot) inside |= inner.op == Opcode::LOOP;
  EXPECT_TRUE(inside);

  auto program = [&](const std::vector<isa::Bundle>& c) {
    isa::Program p;
    p.code = c;
    std::vector<uint32_t> rows(static_cast<size_t>(8 * kOuter * kInner * 128));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint32_t>(i * 2654435761u);
    p.data.push_back(isa::DataSegment{isa::Space::Vmem, 0, rows});
    return p;
  };
  auto expect_same = [&](const core::ArchState& a, const core::ArchState& b) {
    for (int64_t w = 0; w < (10000 + 16 * kOuter * kInner) * 128; ++w)
      ASSERT_EQ(a.vmem[w], b.vmem[w]) << "vmem word " << w;
    for (int64_t w = 0; w < 200; ++w) ASSERT_EQ(a.smem[w], b.smem[w]) << "smem word " << w;
  };
  expect_rolled_runs_the_same(s, program(code), program(two.code), expect_same);
}

// Copy k loads row sB + 8k, sB set twice (to 1000, then after copy 50 to 200), and stores it at
// row 4096 + 8k. Offsets from sB are affine only with RollOptions::register_bases, and then in
// two loops: none may run across the write of sB.
std::vector<isa::Bundle> register_based_program() {
  constexpr int kBase = 3;
  BundleBuilder bb;
  bb.put(0, op_d_imm(Opcode::SLI, 0, 0));
  bb.put(0, op_d_imm(Opcode::SLI, kBase, 1000));
  for (int k = 0; k < kCopies; ++k) {
    const int64_t b = 2 + 2 * k;
    if (k == kCopies / 2) bb.put(b - 1, op_d_imm(Opcode::SLI, kBase, 200));
    bb.put(b, op_d_a_imm(Opcode::VLD, 1, kBase, 8 * k));
    bb.put(b + 1, op_store(Opcode::VST, 1, 0, 4096 + 8 * k));
  }
  return bb.finish();
}

TEST(LoopRoll, RegisterBasedOffsetsRollWithoutCrossingAWriteOfTheBase) {
  const core::CoreSpec s = spec();
  const std::vector<isa::Bundle> code = register_based_program();
  EXPECT_EQ(roll_loops(code, s).loops, 0);
  RollOptions o;
  o.register_bases = true;
  const RolledCode rolled = roll_loops(code, s, o);
  EXPECT_EQ(rolled.loops, 2);
  EXPECT_LT(rolled.code.size() + 80, code.size());
  expect_rolled_runs_the_same(s, with_data(code), with_data(rolled.code), expect_same_results);
}

TEST(LoopRoll, CodeWithoutRepetitionIsUnchanged) {
  BundleBuilder bb;
  for (int k = 0; k < 50; ++k) bb.put(k, op_d_imm(Opcode::SLI, 1 + k % 20, k * k));
  const std::vector<isa::Bundle> code = bb.finish();
  const RolledCode rolled = roll_loops(code, spec());
  EXPECT_EQ(rolled.loops, 0);
  EXPECT_EQ(rolled.code, code);
}

}  // namespace
}  // namespace tessera::kernels
