// The assembler: tessera assembly text -> Program (syntax: docs/assembly.md, /tmp/team.md).
//
// Two passes over the lines. Pass 1 lexes every line and records label definitions (`name:` at
// the start of a line) with the index of the bundle they precede, so labels may be used before
// they are defined. Pass 2 walks the lines in order: directives define constants (usable after
// their definition) and data segments; every other non-empty line is one bundle whose ops are
// parsed generically from their operand signatures (isa/operands.h) and placed into the free
// slots of their class in order of appearance. The first error in source order is thrown as a
// tessera::Error whose where is "file:line:column" and whose why says what was expected.
#pragma once

#include <string>
#include <string_view>

#include "isa/image.h"
#include "isa/operands.h"

namespace tessera::isa {

// Register counts the assembler accepts (s0..s{scalar_regs-1}, ...); each at most 64 (the
// encoding limit). The defaults are the architecture's; a config with other counts passes its own.
struct AsmOptions {
  int scalar_regs = 32;
  int vector_regs = 32;
  int mask_regs = 8;
  int mxus = kMaxMxus;     // MXUs of the core: an `mxuN` operand needs N < mxus
  bool debug_info = true;  // record source file, lines and label symbols in Program::debug
  // The text is a whole program (not a fragment the compiler splices into one), so it must be
  // one that can run (docs/assembly.md): at least one bundle, a last bundle holding 'halt' or
  // 'jmp' (execution cannot run past the end), and every branch target one of its bundles.
  bool whole_program = false;
};

Program assemble(std::string_view text, const std::string& file = "<input>",
                 const AsmOptions& options = {});
// A program file: assembled as a whole program (whole_program is set whatever `options` say).
Program assemble_file(const std::string& path, const AsmOptions& options = {});

// A program from a file that is either a binary image (recognised by its magic) or assembly (a
// whole program, as assemble_file).
Program load_program(const std::string& path, const AsmOptions& options = {});

}  // namespace tessera::isa
