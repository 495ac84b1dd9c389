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
};

struct RolledCode {
  std::vector<isa::Bundle> code;
  std::vector<int64_t> new_index;  // per input bundle: its index in `code`, or -1 if rolled away
  int64_t loops = 0;
};

RolledCode roll_loops(const std::vector<isa::Bundle>& code, const core::CoreSpec& spec,
                      const RollOptions& options = {});

}  // namespace tessera::kernels
