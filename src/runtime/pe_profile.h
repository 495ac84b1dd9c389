// Accumulator width per layer (term-serial PEs): per layer, the narrowest
// accumulator width of the term-serial PEs for which training still reaches the full-width run's
// final test accuracy within `tolerance` (absolute: 0.005 = 0.5%).
//
// The search (every trial is a complete training run: same seed, data, options; only
// core.mxu.term.layer_acc_width differs; F = core.mxu.term.acc_width, the full width):
//  1. baseline: every layer at F; its accuracy A0. ok(widths) := accuracy >= A0 - tolerance.
//  2. per layer L, in program order, the other layers at F: binary search over [min_bits, F]
//     (F is ok: it is the baseline): lo = min_bits, hi = F; while lo < hi: mid = (lo + hi) / 2,
//     ok(L at mid) ? hi = mid : lo = mid + 1. w_L = hi. It assumes ok is monotone in the width
//     (a narrower accumulator never helps); about log2(F - min_bits + 1) trials per layer.
//  3. joint confirmation: every layer at its w_L together. If that is not ok (the layers' losses
//     add up), every layer's width + 1 (capped at F) and again, until ok; all at F is the
//     baseline, so this ends.
// Trials with the same widths are run once (cached).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/term_layer_width.h"
#include "runtime/dataset.h"
#include "runtime/training_run.h"

namespace tessera::runtime {

struct AccWidthTrial {
  std::string stage;  // "baseline", "layer <name>", "joint"
  std::vector<core::LayerAccWidth> widths;
  double accuracy = 0;
  bool ok = false;
};

struct AccWidthProfile {
  int full_bits = 0, min_bits = 0;
  double tolerance = 0, baseline_accuracy = 0, chosen_accuracy = 0;
  std::vector<core::LayerAccWidth> per_layer;  // step 2's w_L
  std::vector<core::LayerAccWidth> chosen;     // after the joint confirmation
  std::vector<AccWidthTrial> trials;           // in the order run
};

// Final test accuracy of a training run with these per-layer widths.
using AccuracyOf = std::function<double(const std::vector<core::LayerAccWidth>&)>;

AccWidthProfile profile_acc_width(const std::vector<std::string>& layers, int full_bits,
                                  int min_bits, double tolerance, const AccuracyOf& accuracy);

// The layers that run on the MXU, in program order, as the compiled training step names them.
std::vector<std::string> mxu_layers(const TrainingRunOptions& options);

// A training run of `options` with options.config.spec's widths replaced; the last epoch's
// test accuracy. `train` and `test` must outlive the returned function.
AccuracyOf training_accuracy(const Dataset& train, const Dataset& test,
                             const TrainingRunOptions& options);

nlohmann::ordered_json profile_json(const AccWidthProfile& p);

// A complete config file (nested JSON) from a resolved flat config (run_config.h), with
// core.mxu.term.layer_acc_width = the chosen widths.
nlohmann::ordered_json config_with_widths(const nlohmann::ordered_json& resolved,
                                          const std::vector<core::LayerAccWidth>& widths);

}  // namespace tessera::runtime
