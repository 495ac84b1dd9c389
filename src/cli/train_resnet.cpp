#include "cli/train_resnet.h"

#include <fmt/format.h>

#include "common/error.h"
#include "graph/resnet_model.h"
#include "runtime/resnet_train_model.h"

namespace tessera::cli {

namespace {

constexpr int kFashionMnistSide = 28;
constexpr int kFashionMnistClasses = 10;

}  // namespace

void add_resnet_flags(CLI::App& cmd, ResNetFlags& f) {
  cmd.add_option("--width", f.width, "resnet18/resnet50: the stem's channels (default 64)");
  cmd.add_option("--image", f.image,
                 "resnet18/resnet50: the side the 28x28 images are zero-padded to (default 32)");
}

bool is_resnet(const std::string& model) {
  return model == "resnet18" || model == "resnet50";
}

runtime::TrainModel resnet_model_from_flags(const std::string& model, const ResNetFlags& f,
                                            uint64_t seed) {
  graph::ResNetSpec spec = graph::resnet_spec(model);
  spec.classes = kFashionMnistClasses;
  spec.channels = 1;
  spec.input = kFashionMnistSide;
  spec.image = f.image.value_or(32);
  spec.width = f.width.value_or(spec.width);
  if (spec.width < 1) throw UsageError("--width", fmt::format("{}: must be >= 1", spec.width));
  if (spec.image < 32)
    throw UsageError("--image",
                     fmt::format("{}: must be >= 32 (the five stride-2 steps)", spec.image));
  return runtime::resnet_train_model(spec, seed);
}

void check_no_resnet_flags(const std::string& model, const ResNetFlags& f) {
  for (const auto& [flag, v] : {std::pair{"--width", f.width}, std::pair{"--image", f.image}})
    if (v)
      throw UsageError(flag, "sets a size of --model resnet18|resnet50, not of '" + model + "'");
}

}  // namespace tessera::cli
