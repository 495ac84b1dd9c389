// `tessera train --model dlrm`: the DLRM-style recommendation model (graph/dlrm_model.h) on the
// generated clicks (runtime/dlrm_data.h), its tables sharded over the sparse cores of `--chips N`
// chips (runtime/dlrm_train.h; --executor chip, the default) or trained by the host reference
// (--executor host-f32). Prints the loss every few steps and the test log loss and AUC; the
// report adds the sharded run's cycles, sparse-core figures and exchange bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace tessera::cli {

// The flags only dlrm reads (add_dlrm_flags), with the recipe's defaults.
struct DlrmFlags {
  int tables = 8, dim = 16, bag = 4;
  int64_t rows = int64_t{1} << 18, test = 32768;
  double zipf = 1.05;
  std::string placement = "mod";
  std::optional<std::string> dense_on;  // tensor-core (the default) or host; --executor chip only
};
void add_dlrm_flags(CLI::App& cmd, DlrmFlags& f);

// The train command's shared flags dlrm reads; unset ones take the recipe's.
struct DlrmRunFlags {
  std::string executor, report, config;
  std::optional<int> batch;
  std::optional<double> lr;
  std::optional<int64_t> steps;
  uint64_t seed = 0;
  nlohmann::json overrides;  // --set (config_overrides)
  int chips = -1, cores_per_chip = 0, threads = 1;
};

void run_train_dlrm(const DlrmFlags& d, const DlrmRunFlags& f);

}  // namespace tessera::cli
