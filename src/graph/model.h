// Models: a layer-level description (ModelSpec) built into a forward graph with the loss.
//
// A ModelSpec is a per-sample input shape, a class count and a list of layers applied in order:
//   dense    units         MatMul by w [in, units] + bias b [units]; needs a flat input [B, in]
//   conv2d   filters, kernel, stride (1), pad (0)
//                          Conv2D by w [k, k, Ci, filters] (HWIO) + bias b [filters]; NHWC input
//   relu                   ReLU
//   maxpool2d kernel, stride (= kernel)
//   flatten                Reshape [B, ...] -> [B, prod(...)] (row-major: NHWC order h, w, c)
// The last layer's output must be [B, classes] (the logits); the loss is softmax cross-entropy
// against i32 labels [B], mean over the batch. Graph values: input "x", labels "labels",
// parameters "<layer>.w" / "<layer>.b" with <layer> = dense1, dense2, ..., conv1, conv2, ...,
// logits "logits", loss "loss".
//
// Zoo (zoo_spec): mlp = dense 256 - relu - dense 128 - relu - dense 10 on [784];
// cnn = conv 5x5x32 pad 2 - relu - maxpool 2 - conv 5x5x64 pad 2 - relu - maxpool 2 - flatten -
// dense 10 on [28, 28, 1]; cnn_small = the same with 4 and 8 filters (fast tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessera::graph {

enum class LayerKind : uint8_t { kDense, kConv2D, kRelu, kMaxPool2D, kFlatten };
const char* layer_kind_name(LayerKind k);

struct LayerSpec {
  LayerKind kind = LayerKind::kRelu;
  int units = 0;   // dense: output features; conv2d: filters
  int kernel = 0;  // conv2d, maxpool2d
  int stride = 1;  // conv2d; maxpool2d (0 in a spec means "= kernel")
  int pad = 0;     // conv2d
};

struct ModelSpec {
  std::string name;
  Shape input;  // per sample, without the batch dimension
  int classes = 10;
  std::vector<LayerSpec> layers;
};

struct Model {
  std::string name;
  int batch = 0;
  Graph graph;  // forward + loss
  int input = -1, labels = -1, logits = -1, loss = -1;
  std::vector<int> params;      // graph.params() order
  std::vector<int64_t> fan_in;  // per parameter: the fan-in of its layer (initialisation)
  // Values carried from one training step to the next that are neither trained nor constant
  // (batch normalisation's running averages): graph inputs bound before each step. `update` is
  // the node output holding the value after the step, or -1 in a graph that only reads it (an
  // evaluation graph). The model's builder gives their initial values.
  struct State {
    int value = -1;
    int update = -1;
  };
  std::vector<State> state;
};

// Builds the forward graph for `batch` samples. Throws Error with where =
// "model '<name>': layer <i> (<kind>)" and why = the problem (shapes included).
Model build_model(const ModelSpec& spec, int batch);

// Ends a builder's model (resnet_model.h, bert_model.h): appends "loss" = softmax cross-entropy
// of m.logits against m.labels, lists the parameters with fan_in 1 each (those models initialise
// themselves) and verifies the graph.
void finish_with_loss(Model& m);

// The zoo's specs; an unknown name throws Error listing the known ones.
ModelSpec zoo_spec(const std::string& name);
std::vector<std::string> zoo_names();

// Kaiming-uniform initialisation as common frameworks do it (kaiming_uniform with a = sqrt(5)
// for weights, and the same bound for biases): every element ~ U(-1/sqrt(fan_in),
// 1/sqrt(fan_in)). Generator: one SplitMix64(seed) (common/splitmix64.h); parameters in graph
// order, elements in row-major order, each x = f32((2*unit() - 1) * bound) computed in double.
std::vector<std::vector<float>> init_params(const Model& m, uint64_t seed);

}  // namespace tessera::graph
