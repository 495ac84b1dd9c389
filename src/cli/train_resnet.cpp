#include "cli/train_resnet.h"

#include <fmt/format.h>

#include "common/error.h"
#include "graph/resnet_model.h"
#include "runtime/resnet_train_model.h"

namespace tessera::cli {

namespace {

constexpr int kFashionMnistSide = 28;
constexpr int kFashionMnistClasses = 10;
constexpr int kSyntheticSide = 224, kSyntheticChannels = 3, kSyntheticClasses = 1000;

}  // namespace

void add_resnet_flags(CLI::App& cmd, ResNetFlags& f) {
  cmd.add_option("--width", f.width, "resnet18/resnet50: the stem's channels (default 64)");
  cmd.add_option("--image", f.image,
                 "resnet18/resnet50: the side the 28x28 images are zero-padded to (default 32), "
                 "or of the synthetic images (default 224)");
}

bool is_resnet(const std::string& model) {
  return model == "resnet18" || model == "resnet50";
}

runtime::TrainModel resnet_model_from_flags(const std::string& model, const ResNetFlags& f,
                                            uint64_t seed, bool synthetic) {
  graph::ResNetSpec spec = graph::resnet_spec(model);
  spec.classes = synthetic ? kSyntheticClasses : kFashionMnistClasses;
  spec.channels = synthetic ? kSyntheticChannels : 1;
  spec.image = f.image.value_or(synthetic ? kSyntheticSide : 32);
  spec.input = synthetic ? spec.image : kFashionMnistSide;
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
