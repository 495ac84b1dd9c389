// Output helpers shared by the commands: JSON files and the training progress bar.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "common/error.h"

namespace tessera::cli {

// Writes j (nlohmann::json or ordered_json), indented, to `path`; throws Error naming the path if
// it cannot be opened or written.
template <class Json>
void write_json(const std::string& path, const Json& j) {
  std::ofstream out(path);
  if (!out) throw Error(path, "cannot open for writing");
  out << j.dump(2) << "\n";
  if (!out) throw Error(path, "write failed");
}

// The training progress bar on stderr (every 10 steps and at the last): "epoch E [###  ] s/total
// loss L", ending the line at the last step.
void print_training_progress(int epoch, int64_t steps, int64_t total, double loss);

}  // namespace tessera::cli
