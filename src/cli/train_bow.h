// `tessera train --model bow --dataset fortunes-topics`: the bag-of-words topic classifier
// (graph/bow_model.h, runtime/bow_train.h). It runs on the host reference (--executor host-f32);
// the chip run needs embedding_bag lowered into the compiled step, which the compiler does not
// do yet, so --executor chip is refused naming the flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera::cli {

// The train command's flags bow reads; unset ones take the recipe's (runtime::BowRecipe).
struct BowFlags {
  std::string dataset, data_dir, executor, report;
  std::optional<int> epochs, batch;
  std::optional<double> lr;
  std::optional<int64_t> steps;
  uint64_t seed = 0;
};

void run_train_bow(const BowFlags& f);

}  // namespace tessera::cli
