// The per-layer accumulator-width search (runtime/pe_profile.h), the width list format
// (core/term_layer_width.h) and widths applied per layer in training.
#include "runtime/pe_profile.h"

#include <fstream>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "core/term_layer_width.h"
#include "runtime/chip_test_data.h"
#include "runtime/run_config.h"
#include "runtime/train_chip.h"
#include "support/error_of.h"

namespace tessera::runtime {
namespace {

using core::LayerAccWidth;

TEST(LayerAccWidth, ParsesAndFormats) {
  std::vector<LayerAccWidth> w;
  EXPECT_EQ(core::parse_layer_acc_widths("dense1=12,dense2=7", w), "");
  EXPECT_EQ(w, (std::vector<LayerAccWidth>{{"dense1", 12}, {"dense2", 7}}));
  EXPECT_EQ(core::format_layer_acc_widths(w), "dense1=12,dense2=7");
  EXPECT_EQ(core::layer_acc_width(w, "dense2", 23), 7);
  EXPECT_EQ(core::layer_acc_width(w, "dense3", 23), 23);
  EXPECT_EQ(core::parse_layer_acc_widths("", w), "");
  EXPECT_TRUE(w.empty());
}

TEST(LayerAccWidth, Malformed_bad) {
  std::vector<LayerAccWidth> w;
  EXPECT_EQ(core::parse_layer_acc_widths("dense1", w), "'dense1' is not LAYER=WIDTH");
  EXPECT_EQ(core::parse_layer_acc_widths("dense1=x", w), "'dense1=x': the width is not an integer");
  EXPECT_EQ(core::parse_layer_acc_widths("dense1=3", w),
            "'dense1=3': the width must be in [4, 100]");
  EXPECT_EQ(core::parse_layer_acc_widths("a=5,a=6", w), "layer 'a' is given twice");
  EXPECT_EQ(testing::error_of([] {
              load_run_config("", {{"core.mxu.term.layer_acc_width", "dense1=2"}});
            }),
            "<built-in defaults> + overrides: key 'core.mxu.term.layer_acc_width': 'dense1=2': the "
            "width must be in [4, 100]");
}

// A hand-checkable accuracy: layer a needs >= 9 bits, b >= 13, and together a + b >= 24.
double toy_accuracy(const std::vector<LayerAccWidth>& w) {
  const int a = w[0].bits, b = w[1].bits;
  return a >= 9 && b >= 13 && a + b >= 24 ? 0.90 : 0.50;
}

std::vector<int> widths_tried(const AccWidthProfile& p, const std::string& stage, size_t layer) {
  std::vector<int> out;
  for (const AccWidthTrial& t : p.trials)
    if (t.stage == stage) out.push_back(t.widths[layer].bits);
  return out;
}

TEST(AccWidthProfile, BinarySearchPerLayerThenJointWidening) {
  const AccWidthProfile p = profile_acc_width({"a", "b"}, 23, 4, 0.005, toy_accuracy);
  EXPECT_DOUBLE_EQ(p.baseline_accuracy, 0.90);
  // a over [4, 23], b at 23: mid 13 ok, 8 no, 11 ok, 10 ok, 9 ok -> 9.
  EXPECT_EQ(widths_tried(p, "layer a", 0), (std::vector<int>{13, 8, 11, 10, 9}));
  // b over [4, 23], a at 23 (a + b >= 24 needs b >= 1): 13 ok, 8 no, 11 no, 12 no -> 13.
  EXPECT_EQ(widths_tried(p, "layer b", 1), (std::vector<int>{13, 8, 11, 12}));
  EXPECT_EQ(p.per_layer, (std::vector<LayerAccWidth>{{"a", 9}, {"b", 13}}));
  // Jointly 9 + 13 = 22 < 24: widen both by one -> 10 + 14 = 24.
  EXPECT_EQ(widths_tried(p, "joint", 0), (std::vector<int>{9, 10}));
  EXPECT_EQ(p.chosen, (std::vector<LayerAccWidth>{{"a", 10}, {"b", 14}}));
  EXPECT_DOUBLE_EQ(p.chosen_accuracy, 0.90);
  EXPECT_TRUE(p.trials.back().ok);
  const nlohmann::ordered_json j = profile_json(p);
  EXPECT_EQ(j["layer_acc_width"], "a=10,b=14");
  EXPECT_EQ(j["trials"].size(), 1u + 5u + 4u + 2u);
}

TEST(AccWidthProfile, RepeatedWidthsAreRunOnce) {
  int runs = 0;
  const AccWidthProfile p =
      profile_acc_width({"a"}, 6, 4, 0.0, [&](const std::vector<LayerAccWidth>&) {
        ++runs;
        return 0.5;
      });
  // Every width is ok (equal accuracy): baseline 6, then 5, 4; joint 4 is a repeat.
  EXPECT_EQ(p.chosen, (std::vector<LayerAccWidth>{{"a", 4}}));
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(p.trials.size(), 4u);
}

TEST(AccWidthProfile, BadArguments_bad) {
  EXPECT_EQ(testing::error_of([] { profile_acc_width({}, 23, 4, 0.005, toy_accuracy); }),
            "acc-width profile: the model has no layer on the MXU");
  EXPECT_EQ(testing::error_of([] {
              profile_acc_width({"a", "b"}, 23, 24, 0.005, toy_accuracy);
            }),
            "acc-width profile: the minimum width 24 must be in [1, 23]");
}

graph::ModelSpec tiny() {
  return {
      "tiny",
      {16},
      4,
      {{graph::LayerKind::kDense, 8}, {graph::LayerKind::kRelu}, {graph::LayerKind::kDense, 4}}};
}

// Two SGD steps of the tiny model; the parameters after them.
std::vector<std::vector<float>> tiny_params(const core::CoreSpec& spec) {
  ChipTrainerOptions o;
  o.batch = 8;
  o.optimizer.kind = graph::OptimizerKind::kSgd;
  ChipTrainer t(tiny(), spec, o);
  std::vector<float> x(8 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 11) * 0.3f - 1.4f;
  const std::vector<int32_t> labels = {0, 1, 2, 3, 3, 2, 1, 0};
  for (int s = 0; s < 2; ++s) t.step(x.data(), labels.data(), 8);
  return t.params();
}

TEST(AccWidthProfile, WidthsApplyPerLayer) {
  core::CoreSpec full = chip_test::tpu_v2_like();
  full.mxu_pe = core::MxuPe::TermSerial;
  const int f = full.term.tile.pe.acc_fraction_bits;
  core::CoreSpec listed = full;  // every layer listed at the full width: the same run
  listed.term.layer_acc_width = {{"dense1", f}, {"dense2", f}};
  core::CoreSpec narrow1 = full;  // dense1 at 4 bits: dense1's weights change
  narrow1.term.layer_acc_width = {{"dense1", 4}};
  core::CoreSpec narrow_all = full;  // the spec's own width at 4 bits
  narrow_all.term.tile.pe.acc_fraction_bits = 4;
  core::CoreSpec narrow_all_but_1 = narrow_all;  // ... except dense1 at full width
  narrow_all_but_1.term.layer_acc_width = {{"dense1", f}};
  const auto p_full = tiny_params(full);
  EXPECT_EQ(chip_test::differing_words(tiny_params(listed), p_full), 0u);
  const auto p_n1 = tiny_params(narrow1);
  EXPECT_GT(chip_test::differing_words({p_n1[0]}, {p_full[0]}), 0u);
  const auto p_nab = tiny_params(narrow_all_but_1);
  const auto p_na = tiny_params(narrow_all);
  EXPECT_GT(chip_test::differing_words({p_nab[2]}, {p_full[2]}), 0u);  // dense2 narrow
  EXPECT_GT(chip_test::differing_words({p_na[0]}, {p_nab[0]}), 0u);
}

// 32 samples of 4 x 4: class c has pixel c set (plus noise), so the tiny model learns it.
Dataset tiny_dataset(uint64_t seed) {
  Dataset d;
  d.name = "tiny";
  d.count = 32;
  d.rows = d.cols = 4;
  d.classes = 4;
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < d.count; ++i) {
    const int32_t c = static_cast<int32_t>(i % 4);
    for (int p = 0; p < 16; ++p)
      d.images.push_back((p == c ? 1.0f : 0.0f) + static_cast<float>(rng.unit()) * 0.25f);
    d.labels.push_back(c);
  }
  return d;
}

TEST(AccWidthProfile, SearchOnATinyTrainingRunWritesALoadableConfig) {
  const Dataset train = tiny_dataset(1), test = tiny_dataset(2);
  TrainingRunOptions o;
  o.model_name = "tiny";
  o.model = tiny();
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json",
                             {{"core.mxu.pe", "term-serial"}});
  o.trainer.batch = 8;
  o.trainer.optimizer.kind = graph::OptimizerKind::kSgd;
  o.trainer.optimizer.lr = 0.1;
  o.epochs = 1;
  const std::vector<std::string> layers = mxu_layers(o);
  ASSERT_EQ(layers, (std::vector<std::string>{"dense1", "dense2"}));
  const AccWidthProfile p =
      profile_acc_width(layers, 23, 16, 0.005, training_accuracy(train, test, o));
  ASSERT_EQ(p.chosen.size(), 2u);
  for (const LayerAccWidth& w : p.chosen) {
    EXPECT_GE(w.bits, 16);
    EXPECT_LE(w.bits, 23);
  }
  EXPECT_TRUE(p.trials.back().ok);
  EXPECT_GE(p.chosen_accuracy, p.baseline_accuracy - 0.005);
  const std::string file = std::string(TESSERA_BINARY_DIR) + "/test-scratch-pe-profile.json";
  {
    std::ofstream out(file);
    out << config_with_widths(o.config.resolved, p.chosen).dump(2);
  }
  const RunConfig back = load_run_config(file);
  EXPECT_EQ(back.spec.term.layer_acc_width, p.chosen);
  EXPECT_EQ(back.spec.mxu_pe, core::MxuPe::TermSerial);
  EXPECT_EQ(back.resolved["core.clock_hz"], o.config.resolved["core.clock_hz"]);
}

}  // namespace
}  // namespace tessera::runtime
