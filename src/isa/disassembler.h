// The disassembler: canonical assembly text for instructions, bundles and whole programs.
//
// Canonical form: registers s3 v3 m3; immediates in signed decimal; memory operands [s3],
// [s3+16], [s3-4]; special registers by name; flag ids in decimal. A bundle is its non-nop ops in
// slot order joined by " ;; " ("nop" when every slot is empty). Whole programs print data segments
// as directives with hex words, then one bundle per line, branch targets as labels L<index> on
// their bundle's line. The assembler places ops into the lowest free slot of their class, so
// assemble(disassemble(p)) == p for every program the assembler produced (debug info aside).
#pragma once

#include <string>

#include "isa/image.h"
#include "isa/instruction.h"

namespace tessera::isa {

// Branch targets are printed as bundle indices (the assembler accepts those too).
std::string disassemble(const Instr& in);
std::string disassemble(const Bundle& b);
std::string disassemble(const Program& p);

}  // namespace tessera::isa
