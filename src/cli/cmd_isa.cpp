// `tessera isa --doc [-o docs/isa.md]`: prints the ISA reference generated from the opcode table
// (the checked-in docs/isa.md is this output; a test keeps them equal).
#include <cstdio>
#include <memory>
#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "isa/image.h"
#include "isa/isa_doc.h"

namespace tessera::cli {

namespace {

struct IsaArgs {
  bool doc = false;
  std::string output;
};

}  // namespace

void register_isa_command(CLI::App& app) {
  auto args = std::make_shared<IsaArgs>();
  auto* cmd = app.add_subcommand("isa", "instruction set reference");
  cmd->add_flag("--doc", args->doc,
                "print the ISA reference (markdown) generated from the opcode table")
      ->required();
  add_output_flag(*cmd, args->output, "the reference");
  cmd->callback([args] {
    std::string text = isa::isa_reference_markdown();
    if (args->output.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      isa::write_file_bytes(args->output,
                            std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    }
  });
}

}  // namespace tessera::cli
