// Deterministic generators of logical graphs for the benchmark families (same arguments + seed ->
// the same graph, bit for bit). All graphs are DAGs with edges from earlier to later nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mapper/graph.h"

namespace tessera::mapper {

// Layered MLP neuron graph: each neuron of layer l+1 receives from `fanout` distinct neurons of
// layer l (all of them if fanout >= layer size), weight uniform in [0.5, 1.5). Neurons with more
// than one successor are multicast.
LogicalGraph gen_layered_mlp(const std::vector<int>& sizes, int fanout, uint64_t seed);

// Convolutional neuron graph: `layers` square feature maps of side `side` (one neuron per pixel and
// channel group is not modelled: one node per pixel); each pixel of layer l+1 receives from the
// kernel x kernel window (zero padding) of layer l around the same position, weight 1 +/- 10 %.
LogicalGraph gen_conv(int side, int layers, int kernel, uint64_t seed);

// Tile graph from layer shapes: layer i produces activations[i] values and is split into
// ceil(activations[i] / tile) tiles; tile a of layer i sends to the tiles of layer i+1 that
// overlap its proportional range (plus a skip edge to layer i+2 every `skip` layers, 0 = none),
// weight = the activation volume carried.
LogicalGraph gen_tiles(const std::vector<long long>& activations, long long tile, int skip,
                       uint64_t seed);

// Random layered DAG: n nodes in `layers` layers of random sizes; each node draws 1..2*deg edges to
// random nodes of the next 1-2 layers; weights log-uniform in [1, 16).
LogicalGraph gen_random_dag(int n, int layers, int deg, uint64_t seed);

// Planted partition: n nodes in k equal groups; pair (i<j) joined with probability p_in inside a
// group and p_out across; weights uniform in [1, 2).
LogicalGraph gen_planted(int n, int k, double p_in, double p_out, uint64_t seed);

// Random graph: n nodes, each pair (i<j) joined with probability deg/(n-1); weights in [1, 2).
LogicalGraph gen_random(int n, double deg, uint64_t seed);

// Zoo models split into neuron groups / tiles (see docs/mapper.md):
//  mlp: 784-256-128-10, groups of `group` neurons per node (default 16).
//  cnn: conv5x5x32 pad2 - relu - maxpool2 - conv5x5x64 pad2 - relu - maxpool2 - fc 3136->10 on a
//       28x28x1 input; conv layers split into spatial tiles of `group` x `group` output pixels
//       (after pooling; default 7) x channel groups of 8, relu and pool fused into their conv tile.
LogicalGraph gen_from_model(const std::string& model, int group);

// The benchmark family `family` (mlp, conv, tiles, dag, planted, random) at about `n` nodes.
LogicalGraph gen_family(const std::string& family, int n, uint64_t seed);
std::vector<std::string> family_names();

}  // namespace tessera::mapper
