// `tessera asm prog.s [-o prog.bin] [--no-debug]`: assembles a program into a binary image
// (format in src/isa/image.h, docs/assembly.md). The default output replaces the extension by .bin.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "isa/assembler.h"
#include "isa/image.h"

namespace tessera::cli {

namespace {

struct AsmArgs {
  std::string input;
  std::string output;
  bool no_debug = false;
};

}  // namespace

void register_asm_command(CLI::App& app) {
  auto args = std::make_shared<AsmArgs>();
  auto* cmd = app.add_subcommand("asm", "assemble a program into a binary image");
  cmd->add_option("input", args->input, "assembly source (.s)")->required();
  add_output_flag(*cmd, args->output, "the image", "the input with extension .bin");
  cmd->add_flag("--no-debug", args->no_debug,
                "leave out the debug section (source lines, label symbols)");
  cmd->callback([args] {
    isa::AsmOptions options;
    options.debug_info = !args->no_debug;
    isa::Program p = isa::assemble_file(args->input, options);
    std::string out = args->output.empty()
                          ? std::filesystem::path(args->input).replace_extension(".bin").string()
                          : args->output;
    isa::write_image_file(out, p);
    std::printf("%s: %zu bundles, %zu data segments -> %s\n", args->input.c_str(), p.code.size(),
                p.data.size(), out.c_str());
  });
}

}  // namespace tessera::cli
