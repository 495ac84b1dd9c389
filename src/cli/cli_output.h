// Output helpers shared by the commands: JSON files and the training progress bar.
#pragma once

#include <cstdint>
#include <string>

#include "common/file_io.h"

namespace tessera::cli {

// Writes j (nlohmann::json or ordered_json), indented, to `file` (opened before a long run, so an
// unwritable path fails before the run starts) and closes it; errors name the path.
template <class Json>
void write_json(OutputFile& file, const Json& j) {
  file.write(j.dump(2) + "\n");
  file.close();
}

// write_json to `path`, opened now.
template <class Json>
void write_json(const std::string& path, const Json& j) {
  OutputFile file(path, "JSON file");
  write_json(file, j);
}

// The training progress bar on stderr (every 10 steps and at the last): "epoch E [###  ] s/total
// loss L", ending the line at the last step.
void print_training_progress(int epoch, int64_t steps, int64_t total, double loss);

}  // namespace tessera::cli
