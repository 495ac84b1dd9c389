// The units of the tensor core (unit.h): ONE table, in units.cpp. Adding a unit to the core is
// one file pair under core/units/ plus one row in that table (docs: "Adding a core unit").
#pragma once

#include "core/unit.h"

namespace tessera::core {

// The registered units, in the order their config sections are read and their statistics are
// reported. Each isa::Unit appears at most once; the ops of the scalar and sync columns and the
// exchange's ops are the Machine's own (machine.h).
UnitTable core_units();

}  // namespace tessera::core
