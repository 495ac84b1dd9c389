// Loop rerolling: turns periodic stretches of straight-line bundle code into counted loops, so the
// code size of a generator's repeated tiles stops growing with their number.
//
// A region of n copies of an L-bundle body is rolled when the copies are identical except for
// "affine" immediates, whose value in copy k is imm0 + k * d:
//   * `sli sD, imm`                                  becomes `saddi sD, sI, imm0`
//   * a memory operand `[sZ+imm]` whose base sZ is the zero register (see below)
//                                                    becomes `[sI+imm0]`
// where sI is an induction register holding k * d (one per distinct d). The loop is
//   setup:  sli sC, n ;; sli sI, 0 ...             (new bundles before the body)
//   top:    the first copy, rewritten; `saddi sI, sI, d` in a bundle with a free scalar slot
//           (later bundles of the body use imm0 - d); `loop sC, top` in the body's last bundle.
// Every trip executes the same ops in the same bundles as the copy it replaces, so the values are
// those of the straight-line code; the cycles grow by the taken-branch penalty per trip, the setup
// bundles and any interlock on sI. sC and the sI are scalar registers the body does not touch and
// that are dead after the region (their next reference writes without reading, before any branch).
//
// The zero register: s0, when nothing in the code writes it except `sli s0, 0` and that write
// precedes every region (the compiler's and the GEMM generator's convention). Otherwise memory
// immediates are never affine.
// Bundles holding a branch, `loop` or `halt`, and branch targets, never belong to a region; the
// targets of the branches kept are remapped to the new bundle indices.
//
// Nested rolling (RollOptions::nested): the rolling is repeated on its own output until no region
// is left, and a counted loop whose target is at or before its `loop` (a local loop) may sit
// inside a copy: its bundles are compared with their target relative to the bundle, a region's
// copies must each hold whole local loops, the outer loop's `loop` goes to a last bundle without
// a branch and its increments outside every inner loop. An induction register starts at the
// first copy's immediate of its first affine slot (`sli sI, base`, the slots rewritten to
// imm0 - base), so an inner loop's setup carries what varies between outer copies as an `sli`
// immediate: an outer level rolls it like any other.
#pragma once

#include <cstdint>
#include <vector>

#include "core/spec.h"
#include "isa/instruction.h"

namespace tessera::kernels {

struct RollOptions {
  int min_body = 64;        // bodies shorter than this are unrolled to a multiple of the period
  int64_t min_saving = 48;  // bundles a region must save to be rolled
  int max_period = 8192;    // longest period searched
  bool nested = false;      // loops inside loops (above)
  bool inside_out = false;  // only the shortest-period-first selection (see loop_roll.cpp)
  // Memory offsets from any base register are affine too: `[sB+imm]` becomes `[sI+imm0]`, sI
  // starting at sB (`saddi sI, sB, ...`), when the loop's body does not write sB.
  bool register_bases = false;
};

struct RolledCode {
  std::vector<isa::Bundle> code;
  std::vector<int64_t> new_index;  // per input bundle: its index in `code`, or -1 if rolled away
  int64_t loops = 0;
};

RolledCode roll_loops(const std::vector<isa::Bundle>& code, const core::CoreSpec& spec,
                      const RollOptions& options = {});

}  // namespace tessera::kernels
