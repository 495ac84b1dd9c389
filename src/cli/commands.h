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
void register_bench_command(CLI::App& app);
void register_map_command(CLI::App& app);
void register_isa_command(CLI::App& app);
void register_train_command(CLI::App& app);
void register_compile_command(CLI::App& app);
void register_adam_command(CLI::App& app);  // also adds `bench adam`: after register_bench_command
void register_bench_fabric_command(CLI::App& app);  // `bench fabric`: after register_bench_command
void register_bench_train_command(CLI::App& app);   // `bench train`: after register_bench_command
void register_bench_bsp_commands(
    CLI::App& app);  // `bench compile`, `bench allreduce`: after register_bench_command

}  // namespace tessera::cli
