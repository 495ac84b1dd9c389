// The zoo's ResNets (graph/resnet_model.h) as training models (train_model.h): `tessera train
// --model resnet18|resnet50`.
//
// Contract: build is build_resnet(spec, batch) with batch statistics and every bn's running
// averages as state (graph::Model::state), build_eval the same network reading the running
// averages; initial holds init_resnet_params(seed), initial_state initial_resnet_state (means 0,
// variances 1). The model's name is "resnet<depth>", its per-sample input [input, input,
// channels] (spec.input, or spec.image when 0), its classes spec.classes.
#pragma once

#include <cstdint>

#include "graph/resnet_model.h"
#include "runtime/train_model.h"

namespace tessera::runtime {

TrainModel resnet_train_model(const graph::ResNetSpec& spec, uint64_t seed);

}  // namespace tessera::runtime
