// `tessera bench pe` (cmd_bench_pe.cpp): registered by register_bench_command.
#pragma once

namespace CLI {
class App;
}

namespace tessera::cli {

// Adds `pe` to the existing `bench` subcommand of `app`.
void register_bench_pe_command(CLI::App& app);

}  // namespace tessera::cli
