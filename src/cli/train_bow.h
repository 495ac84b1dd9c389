// `tessera train --model bow --dataset fortunes-topics`: the bag-of-words topic classifier
// (graph/bow_model.h, runtime/bow_train.h) on the simulated chip (runtime/bow_chip.h: the table on
// the sparse core, the dense layer on the tensor core; --executor chip, the default) or on the
// host reference (--executor host-f32). The chip's report adds the sparse core's figures. The chip
// trainer checkpoints and resumes with the train command's flags (--checkpoint-dir, --resume, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::cli {

// The train command's flags bow reads; unset ones take the recipe's (runtime::BowRecipe).
struct BowFlags {
  std::string dataset, data_dir, executor, report, config;
  std::optional<int> epochs, batch;
  std::optional<double> lr;
  std::optional<int64_t> steps;
  uint64_t seed = 0;
  nlohmann::json overrides;  // --set (config_overrides)
  double host_gbps = 16;
  int chips = -1;  // --chips given (>= 0): refused
  // Checkpoints of the chip trainer (runtime/bow_chip.h, runtime/checkpoint.h): after every epoch
  // and every `checkpoint_every` steps into checkpoint_dir, keeping the newest checkpoint_keep;
  // resume: continue from the newest there.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  int checkpoint_keep = 2;
  bool resume = false;
};

void run_train_bow(const BowFlags& f);

}  // namespace tessera::cli
