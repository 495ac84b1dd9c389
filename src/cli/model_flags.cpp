#include "cli/model_flags.h"

#include <utility>

#include <fmt/format.h>

#include "cli/common_flags.h"
#include "common/error.h"
#include "onnx/onnx_training.h"
#include "runtime/bert_train_model.h"

namespace tessera::cli {

void add_transformer_flags(CLI::App& cmd, ModelFlags& f) {
  cmd.add_option("--d-model", f.d_model, "gpt/bert: model width (default 128 / 768)");
  cmd.add_option("--heads", f.heads,
                 "gpt/bert: attention heads, dividing --d-model (default 4 / 12)");
  cmd.add_option("--layers", f.layers, "gpt/bert: decoder / encoder blocks (default 2 / 12)");
  cmd.add_option("--context", f.context, "gpt/bert: window length in bytes (default 64 / 128)");
}

void add_onnx_loss_flags(CLI::App& cmd, ModelFlags& f) {
  cmd.add_option("--loss", f.loss, "--model x.onnx: the loss head, softmax-ce:OUTPUT_NAME");
  cmd.add_option("--label-input", f.label_input,
                 "--model x.onnx: the model's integer labels input (default: a new 'labels')");
}

runtime::TrainModel model_from_flags(const ModelFlags& f, uint64_t seed, bool synthetic) {
  if (f.model.ends_with(".onnx")) {
    return onnx_import::onnx_train_model(f.model, onnx_import::loss_output_from_flag(f.loss),
                                         f.label_input);
  }
  if (!f.loss.empty()) throw UsageError("--loss", "sets the loss head of --model x.onnx");
  if (!is_resnet(f.model)) check_no_resnet_flags(f.model, f.resnet);
  if (f.model != "gpt" && f.model != "bert") {
    for (const auto& [flag, v] :
         {std::pair{"--d-model", f.d_model}, std::pair{"--heads", f.heads},
          std::pair{"--layers", f.layers}, std::pair{"--context", f.context}})
      if (v) throw UsageError(flag, "sets a size of --model gpt|bert, not of '" + f.model + "'");
    if (is_resnet(f.model)) return resnet_model_from_flags(f.model, f.resnet, seed, synthetic);
    return model_from_flag(f.model);
  }
  // The transformer's sizes: the flags over the model's defaults, each >= 1, heads dividing d.
  auto sizes = [&](int& d_model, int& heads, int& layers, int& context) {
    d_model = f.d_model.value_or(d_model);
    heads = f.heads.value_or(heads);
    layers = f.layers.value_or(layers);
    context = f.context.value_or(context);
    for (const auto& [flag, v] : {std::pair{"--d-model", d_model}, std::pair{"--heads", heads},
                                  std::pair{"--layers", layers}, std::pair{"--context", context}})
      if (v < 1) throw UsageError(flag, fmt::format("{}: must be >= 1", v));
    if (d_model % heads != 0)
      throw UsageError("--heads",
                       fmt::format("{} heads do not divide --d-model {}", heads, d_model));
  };
  if (f.model == "bert") {
    graph::BertSpec b;
    sizes(b.d_model, b.heads, b.layers, b.seq);
    return runtime::bert_train_model(b, seed);
  }
  graph::GptSpec g;
  sizes(g.d_model, g.heads, g.layers, g.context);
  return runtime::TrainModel(g);
}

}  // namespace tessera::cli
