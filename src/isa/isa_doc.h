// The ISA reference (docs/isa.md), generated from the opcode table so it cannot drift.
#pragma once

#include <string>

namespace tessera::isa {

// Markdown: bundle slots, slot encoding, operand kinds, special registers, and every op grouped
// by slot class with opcode, operands, unit, latency class and summary.
std::string isa_reference_markdown();

}  // namespace tessera::isa
