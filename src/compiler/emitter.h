// Emitter: a list scheduler that turns a sequential stream of instructions into VLIW bundles.
//
// Contract: executing the bundles gives the values of executing the emitted instructions one by
// one in emission order. Each instruction goes to the earliest bundle >= the current floor that
//   * has a free slot of its class,
//   * is after the bundle of the last write of every register it reads (RAW; placed at least the
//     producer's latency later when possible, the core's scoreboard covers the rest),
//   * is after the last write (WAW) and not before the last read (WAR) of every register it writes,
//   * keeps the order of the ops of its unit (FIFO units: pushes and pops stay in program order;
//     DMA, waits and signals stay in order),
//   * for vector-memory ops, is after every earlier store to an overlapping row range (and stores
//     after every earlier load or store of an overlapping range).
// barrier() moves the floor past everything placed so far (used around DMAs and waits, which
// order memory the scheduler does not track: HBM and vmem written by DMA).
//
// Hand-laid code (place()): each instruction in a bundle of its own, or joined to the last one,
// in emission order; code after it starts with no register state, as after append().
// Labels: new_label() names a code address, bind() puts it at the next bundle, and a branch placed
// with place_branch() targets it; finish() resolves every reference (an unbound label is an error).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/spec.h"
#include "isa/instruction.h"

namespace tessera::compiler {

class Emitter {
 public:
  explicit Emitter(const core::CoreSpec& spec);

  // Places `in`; `vmem_rows` = [first, last] vector-memory rows it touches (vld/vst only).
  int64_t emit(const isa::Instr& in, int64_t row_lo = -1, int64_t row_hi = -1);
  void barrier();
  // Ends a loop body that starts at bundle `top`: `loop sCounter, top` in the body's last bundle
  // (or the first later one with a free scalar slot), then a barrier.
  void close_loop(int64_t top, int counter);
  // Replaces the bundles from `first` on by their loop-rolled form (kernels/loop_roll.h: periodic
  // stretches become counted loops; registers it takes are dead after them, per the convention
  // that kernels hand no scalar register but s0 to later code), after a barrier.
  void roll_since(int64_t first);
  // With nested rolling on, roll_since() also rolls loops into outer loops (RollOptions::nested).
  void set_nested_rolling(bool on) { m_nested = on; }
  bool nested_rolling() const { return m_nested; }
  // Appends already scheduled code (e.g. a GEMM kernel) after everything placed so far.
  void append(const std::vector<isa::Bundle>& code);
  // `in` alone in a new bundle after everything placed so far, or (join) in the last bundle's next
  // free slot of its class (as the assembler places ops joined by `;;`). Returns the bundle.
  int64_t place(const isa::Instr& in, bool join = false);
  int new_label();
  void bind(int label);
  // A hand-laid branch (`in` with a label operand) to `label`.
  int64_t place_branch(const isa::Instr& in, int label, bool join = false);
  int64_t size() const { return static_cast<int64_t>(m_bundles.size()); }
  // The index in finish()'s code of what is placed at bundle `at` or later (empty bundles before
  // it are dropped).
  int64_t final_index(int64_t at) const;
  const std::vector<isa::Bundle>& bundles() const { return m_bundles; }
  // The bundles with empty ones dropped and a final halt; branch targets (bundle indices, also in
  // appended code, relative to its first bundle) are renumbered accordingly.
  std::vector<isa::Bundle> finish() const;

 private:
  struct Access {
    int64_t lo, hi, at;
    bool store;
  };
  int64_t& ready(char file, int index);
  int64_t& last_read(char file, int index);
  bool slot_free(int64_t at, isa::SlotClass cls) const;
  int put(int64_t at, const isa::Instr& in);  // returns the slot
  void forget_registers();                    // later code goes after everything placed so far
  struct LabelRef {
    int64_t bundle;
    int slot, label;
  };

  const core::CoreSpec& m_spec;
  std::vector<isa::Bundle> m_bundles;
  int64_t m_floor = 0;
  std::vector<int64_t> m_ready[3], m_read[3];  // scalar, vector, mask: earliest use / last read
  std::array<int64_t, isa::kNumUnits> m_unit_last{};
  std::vector<Access> m_vmem;
  std::vector<int64_t> m_labels;  // bundle of each label; -1 while unbound
  std::vector<LabelRef> m_label_refs;
  bool m_nested = false;
};

// Register operands of an instruction, from its operand signature.
struct RegUse {
  char file;  // 's', 'v', 'm'
  int index;
  bool write;
};
std::vector<RegUse> reg_uses(const isa::Instr& in);

}  // namespace tessera::compiler
