// Per-layer accumulator widths of the term-serial MXU (config key core.mxu.term.layer_acc_width):
// "LAYER=W[,LAYER=W...]" with LAYER a layer as compiler/mxu_regions.h names them ("dense1",
// "conv2", ...) and W the accumulator width (fraction bits, as core.mxu.term.acc_width) that the
// MXU uses for every mmul of that layer's kernels (forward, input and weight gradient); layers not
// listed use core.mxu.term.acc_width. Empty: every layer at acc_width. Applied through the
// program's MXU regions (runtime/pe_attribution.h sets the width per mmul by its pc: metadata that
// stands for a width register the program would write before each layer's GEMMs).
#pragma once

#include <string>
#include <vector>

namespace tessera::core {

struct LayerAccWidth {
  std::string layer;
  int bits = 23;
  friend bool operator==(const LayerAccWidth&, const LayerAccWidth&) = default;
};

// Parses `text` into `out`; returns "" or why it is malformed (a layer twice, a width outside
// [kMinAccFractionBits, kMaxAccFractionBits], no '=').
std::string parse_layer_acc_widths(const std::string& text, std::vector<LayerAccWidth>& out);
// The inverse: "dense1=12,dense2=14" (in the list's order).
std::string format_layer_acc_widths(const std::vector<LayerAccWidth>& widths);
// The width of `layer`: its entry, else `fallback`.
int layer_acc_width(const std::vector<LayerAccWidth>& widths, const std::string& layer,
                    int fallback);

}  // namespace tessera::core
