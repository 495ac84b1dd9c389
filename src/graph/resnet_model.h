// The zoo's ResNets: torchvision's ResNet-18 and ResNet-50 (v1.5: a bottleneck's stride on its
// 3x3 convolution) as graph-IR models, NHWC.
//
// Graph for `batch` images [B, H, W, 3] (H = W = spec.image) with base width w (64); images of
// another channel count or a smaller side (spec.channels, spec.input: e.g. Fashion-MNIST's
// [28, 28, 1]) are x [B, input, input, channels], zero-padded to [B, image, image, channels] by a
// pad node "pad" (floor((image - input) / 2) before, the rest after) ahead of the stem:
//   stem: conv 7x7/2 pad 3 (3 -> w) - bn - relu - max pool 3x3/2 pad 1 (a pad node with -inf,
//         then maxpool2d)
//   four stages of planes w, 2w, 4w, 8w with 2, 2, 2, 2 basic blocks (depth 18) or 3, 4, 6, 3
//   bottleneck blocks (depth 50); a stage's first block has stride 1 (stage 1) or 2:
//     basic:      conv 3x3/s - bn - relu - conv 3x3 - bn, expansion 1
//     bottleneck: conv 1x1 - bn - relu - conv 3x3/s - bn - relu - conv 1x1 (x 4) - bn,
//                 expansion 4
//     out = relu(block(x) + shortcut(x)); the shortcut is x, or conv 1x1/s - bn (the projection)
//     when the stride or the channel count changes
//   global average pool (sum_to over H, W, then scale 1 / (H W)) - fc (Linear(8w * expansion,
//   classes)) = the logits [B, classes]; loss = softmax cross-entropy against labels [B].
// Convolutions have no bias. Names follow torchvision's: "conv1", "bn1", "layer<s>.<b>.conv<k>",
// "layer<s>.<b>.bn<k>", "layer<s>.<b>.downsample.0" (conv) and ".downsample.1" (bn), "fc";
// parameters "<conv>.w" (HWIO), "<bn>.gamma", "<bn>.beta", "fc.w" [in, classes], "fc.b"; the
// state (Model::state) "<bn>.running_mean" and "<bn>.running_var".
// Batch normalisation (graph/batch_norm.h, eps 1e-5, momentum 0.1):
//   kTrain: batch statistics; every bn's running averages are state with their update;
//   kEval:  the running averages (state read, not updated).
// resnet_folded_graph is the inference graph with every bn folded into its convolution (a
// conv2d by constant weights, then an add of the constant bias) and every weight a graph
// constant: its one input is "x", its last node's output the logits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model.h"

namespace tessera::graph {

struct ResNetSpec {
  int depth = 18;  // 18 or 50
  int classes = 1000;
  int image = 224;   // H = W
  int width = 64;    // the stem's channels (torchvision: 64); smaller for tests
  int channels = 3;  // the images' channels
  int input = 0;     // the images' side before zero padding to `image` (0: image)
};

enum class BatchNormMode : uint8_t { kTrain, kEval };

// "resnet18" / "resnet50" with torchvision's sizes; Error for other names.
ResNetSpec resnet_spec(const std::string& name);

// Throws Error "model 'resnet<depth>'": <why> for a depth other than 18 or 50, sizes < 1, an
// image too small for the five stride-2 steps (image < 32), or an input side above the image.
Model build_resnet(const ResNetSpec& spec, int batch, BatchNormMode mode = BatchNormMode::kTrain);

// torchvision's initialisation: conv weights ~ N(0, 2 / fan_out), fan_out = KH KW Cout
// (kaiming_normal, mode fan_out, ReLU); bn gamma 1, beta 0; fc weight and bias
// ~ U(-1/sqrt(in), 1/sqrt(in)). Generator: one SplitMix64(seed), parameters in graph order,
// elements row-major, normal draws as init_gpt_params (common/normal_draw.h), uniform ones as
// init_params.
std::vector<std::vector<float>> init_resnet_params(const Model& m, uint64_t seed);
// The state's initial values in Model::state order: running means 0, running variances 1.
std::vector<std::vector<float>> initial_resnet_state(const Model& m);

// The inference graph with bn folded (see above), from a model built by build_resnet with the
// same spec (any batch and mode) and its parameter and state values.
Graph resnet_folded_graph(const ResNetSpec& spec, int batch, const Model& m,
                          const std::vector<std::vector<float>>& params,
                          const std::vector<std::vector<float>>& state);

}  // namespace tessera::graph
