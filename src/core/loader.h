// Loading a program into a core: decode the code once, place the data segments, set %pid.
#pragma once

#include "core/decoded.h"
#include "core/spec.h"
#include "core/state.h"
#include "core/units.h"
#include "isa/image.h"

namespace tessera::core {

// Writes the program's data segments into `s` (smem/HBM at word addresses, vmem at rows) and sets
// pid to the program's index word. A segment outside its memory is a tessera::Error naming it.
void load_program_data(const isa::Program& program, ArchState& s, const CoreSpec& spec);

// Options shared by both interpreters.
struct RunOptions {
  // Bundles one loaded program may issue (the timed core counts from its last load(): a host that
  // runs the same program step after step gets the limit per step); exceeding it is a fault (a
  // runaway loop), not a hang.
  int64_t max_bundles = 1'000'000'000;
  UnitTable units = core_units();  // the units the core is built with (unit.h)
};

// Throws SimFault for a fetch at `pc` outside the code (running off the end: a missing halt).
[[noreturn]] void fault_fetch(int64_t pc, int64_t cycle, size_t code_size);
// Throws SimFault for exceeding the bundle limit.
[[noreturn]] void fault_limit(int64_t pc, int64_t cycle, const isa::Bundle& b, int64_t limit);

}  // namespace tessera::core
