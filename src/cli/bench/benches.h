// The subcommands of `tessera bench`, one file each in this directory. A benchmark is added by
// writing its setup function (declare the flags on `cmd`, set its callback) and one row of
// kBenchCommands (cli/cmd_bench.cpp).
#pragma once

namespace CLI {
class App;
}

namespace tessera::bench {

struct BenchCommand {
  const char* name;
  const char* help;
  void (*setup)(CLI::App& cmd);
};

void setup_mxu(CLI::App& cmd);        // mxu.cpp
void setup_sim(CLI::App& cmd);        // sim.cpp
void setup_pe(CLI::App& cmd);         // pe.cpp
void setup_adam(CLI::App& cmd);       // adam.cpp
void setup_compile(CLI::App& cmd);    // compile.cpp
void setup_allreduce(CLI::App& cmd);  // allreduce.cpp
void setup_fabric(CLI::App& cmd);     // fabric.cpp
void setup_train(CLI::App& cmd);      // train.cpp
void setup_suite(CLI::App& cmd);      // suite.cpp
void setup_embedding(CLI::App& cmd);  // embedding.cpp

}  // namespace tessera::bench
