// `tessera disasm prog.bin [-o out.s]`: prints a program image (or an assembly file, giving its
// canonical form) as assembly that assembles back to the same code and data.
#include <cstdio>
#include <memory>
#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "isa/image.h"

namespace tessera::cli {

namespace {

struct DisasmArgs {
  std::string input;
  std::string output;
};

}  // namespace

void register_disasm_command(CLI::App& app) {
  auto args = std::make_shared<DisasmArgs>();
  auto* cmd = app.add_subcommand("disasm", "disassemble a program image into assembly");
  cmd->add_option("input", args->input, "program image (.bin) or assembly (.s)")->required();
  add_output_flag(*cmd, args->output, "the assembly");
  cmd->callback([args] {
    std::string text = isa::disassemble(isa::load_program(args->input));
    if (args->output.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      isa::write_file_bytes(args->output,
                            std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    }
  });
}

}  // namespace tessera::cli
