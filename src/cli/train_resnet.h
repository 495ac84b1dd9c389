// `tessera train --model resnet18|resnet50 [--width W] [--image N]`: the zoo's ResNets
// (runtime/resnet_train_model.h) on Fashion-MNIST: the 28 x 28 one-channel images zero-padded to
// N x N (default 32) in the graph, 10 classes, stem width W (default 64, torchvision's). With
// `--dataset synthetic`: torchvision's input, random N x N x 3 images (default 224) in 1000
// classes. Batch
// normalisation trains from batch statistics; its running averages stay on the chip (or in the
// host reference) and evaluation reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "runtime/train_model.h"

namespace tessera::cli {

struct ResNetFlags {
  std::optional<int> width, image;
};
void add_resnet_flags(CLI::App& cmd, ResNetFlags& f);

bool is_resnet(const std::string& model);
// The model of --model resnet18|resnet50 with the flags; UsageError for a flag out of range.
runtime::TrainModel resnet_model_from_flags(const std::string& model, const ResNetFlags& f,
                                            uint64_t seed, bool synthetic);
// UsageError naming a ResNet flag given for another model.
void check_no_resnet_flags(const std::string& model, const ResNetFlags& f);

}  // namespace tessera::cli
