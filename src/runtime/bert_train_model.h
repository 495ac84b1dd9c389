// The zoo's BERT-style encoder (graph/bert_model.h) as a training model (train_model.h): `tessera
// train --model bert`, token classification at every position of windows of spec.seq token ids.
//
// Contract: build is build_bert(spec, batch); initial holds init_gpt_params(seed) of the batch-1
// model (BERT's initialisation: N(0, 0.02) weights and embeddings, biases 0, gains 1); no state.
// The model's name is "bert", `bert` holds the sizes, and it takes text datasets whose windows are
// spec.seq tokens (TrainModel::context()).
#pragma once

#include <cstdint>

#include "graph/bert_model.h"
#include "runtime/train_model.h"

namespace tessera::runtime {

TrainModel bert_train_model(const graph::BertSpec& spec, uint64_t seed);

}  // namespace tessera::runtime
