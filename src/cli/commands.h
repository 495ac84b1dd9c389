// Each `tessera <command>` lives in its own cmd_<name>.cpp and registers itself here.
// A command's callback throws tessera::Error on bad input; main() maps it to a message + exit 1.
#pragma once

namespace CLI {
class App;
}

namespace tessera::cli {

void register_asm_command(CLI::App& app);
void register_disasm_command(CLI::App& app);
void register_run_command(CLI::App& app);
void register_config_command(CLI::App& app);
void register_bench_command(CLI::App& app);  // every `bench` subcommand (cmd_bench.cpp)
void register_map_command(CLI::App& app);
void register_isa_command(CLI::App& app);
void register_train_command(CLI::App& app);
void register_compile_command(CLI::App& app);
void register_adam_command(CLI::App& app);
void register_report_command(CLI::App& app);
void register_generate_command(CLI::App& app);
void register_import_command(CLI::App& app);  // ONNX import (cmd_import.cpp)
void register_infer_command(CLI::App& app);   // ONNX inference on the chip (cmd_infer.cpp)

}  // namespace tessera::cli
