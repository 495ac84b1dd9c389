#include "runtime/bert_train_model.h"

#include "graph/gpt_model.h"

namespace tessera::runtime {

TrainModel bert_train_model(const graph::BertSpec& spec, uint64_t seed) {
  const graph::Model one = graph::build_bert(spec, 1);
  TrainModel t;
  t.spec.name = "bert";
  t.spec.input = {spec.seq};
  t.spec.classes = spec.vocab;
  t.bert = spec;
  t.build = [spec](int batch) { return graph::build_bert(spec, batch); };
  t.initial = graph::init_gpt_params(one, seed);
  return t;
}

}  // namespace tessera::runtime
