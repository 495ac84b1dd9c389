#include "runtime/resnet_train_model.h"

namespace tessera::runtime {

TrainModel resnet_train_model(const graph::ResNetSpec& spec, uint64_t seed) {
  const graph::Model one = graph::build_resnet(spec, 1);
  TrainModel t;
  t.spec.name = one.name;
  const int side = spec.input > 0 ? spec.input : spec.image;
  t.spec.input = {side, side, spec.channels};
  t.spec.classes = spec.classes;
  t.build = [spec](int batch) { return graph::build_resnet(spec, batch); };
  t.build_eval = [spec](int batch) {
    return graph::build_resnet(spec, batch, graph::BatchNormMode::kEval);
  };
  t.initial = graph::init_resnet_params(one, seed);
  t.initial_state = graph::initial_resnet_state(one);
  return t;
}

}  // namespace tessera::runtime
