// Training with the exponent base-delta encoding of HBM traffic (core/hbm_encoding.h,
// compiler/hbm_roles.h, runtime/hbm_report.h), and the epoch energy by the PE that ran
// (core/energy.h).
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "numerics/exponent_codec.h"
#include "runtime/chip_test_data.h"
#include "runtime/training_run.h"

namespace tessera::runtime {
namespace {

struct Data {
  Dataset train = chip_test::synthetic_dataset("synthetic", 16, 1);
  Dataset test = chip_test::synthetic_dataset("synthetic-test", 8, 2);
};
const Data& data() {
  static const Data d;
  return d;
}

// mlp, batch 8, 2 Adam steps with Adam on the vector unit (so the optimizer state moves by DMA).
TrainingRunOptions options(const nlohmann::json& overrides) {
  TrainingRunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config =
      load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json", overrides);
  o.trainer.batch = 8;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-3;
  o.trainer.adam_on = compiler::AdamOn::kVectorUnit;
  o.epochs = 1;
  o.steps_limit = 2;
  return o;
}

const char* const kKinds[] = {"weights", "activations", "gradients", "optimizer_state"};

// Runs both; the same weights, optimizer state, loss and accuracy, fewer cycles with the encoding
// on; returns their epoch reports (off, on).
std::pair<nlohmann::ordered_json, nlohmann::ordered_json> epochs_off_and_on(TrainingRun& off,
                                                                            TrainingRun& on) {
  EXPECT_TRUE(off.run());
  EXPECT_TRUE(on.run());
  EXPECT_EQ(chip_test::differing_words(off.trainer().params(), on.trainer().params()), 0u);
  EXPECT_EQ(
      chip_test::differing_words(off.trainer().optimizer_state(), on.trainer().optimizer_state()),
      0u);
  const nlohmann::ordered_json a = off.report()["epochs"][0];
  const nlohmann::ordered_json b = on.report()["epochs"][0];
  EXPECT_EQ(a["loss"], b["loss"]);
  EXPECT_EQ(a["test_accuracy"], b["test_accuracy"]);
  EXPECT_LT(b["sim_cycles"].get<int64_t>(), a["sim_cycles"].get<int64_t>());
  return {a, b};
}

TEST(HbmEncodingTraining, EncodingChangesNoValueAndShortensTheSteps) {
  TrainingRun off(data().train, data().test, options(nlohmann::json::object()));
  TrainingRun on(data().train, data().test, options({{"core.hbm.exponent_encoding.on", true}}));
  const auto [a, b] = epochs_off_and_on(off, on);
  EXPECT_LT(b["energy_j"].get<double>(), a["energy_j"].get<double>());
  EXPECT_EQ(a["hbm_encoding"], nlohmann::ordered_json({{"on", false}}));
  const nlohmann::ordered_json& e = b["hbm_encoding"];
  EXPECT_EQ(e["group_size"], 16);
  EXPECT_EQ(e["delta_bits"], 3);
  for (const char* kind : kKinds) {
    const nlohmann::ordered_json& k = e["kinds"][kind];
    EXPECT_GT(k["requests"].get<int64_t>(), 0) << kind;
    EXPECT_GT(k["compression_ratio"].get<double>(), 1.0) << kind;
    EXPECT_EQ(k["compression_ratio"].get<double>(),
              k["raw_bytes"].get<double>() / k["encoded_bytes"].get<double>())
        << kind;
  }
  // The roles cover the traffic: what is left (labels, loss, scalars, kernel scratch) is small.
  EXPECT_LT(e["kinds"]["other"]["raw_bytes"].get<double>(),
            0.05 * e["total"]["raw_bytes"].get<double>());
}

// Adam on the Adam unit (the default), its data cache too small for m and v (they spill to HBM):
// the unit's own traffic is encoded too (theta: weights, g: gradients, m and v: optimizer state).
TEST(HbmEncodingTraining, TheAdamUnitsTrafficIsEncodedWithTheSameValues) {
  auto unit_options = [](bool on) {
    TrainingRunOptions o =
        options({{"core.hbm.exponent_encoding.on", on}, {"core.adam.dcache_bytes", 0}});
    o.trainer.adam_on = compiler::AdamOn::kUnit;
    return o;
  };
  TrainingRun off(data().train, data().test, unit_options(false));
  TrainingRun on(data().train, data().test, unit_options(true));
  const auto [a, b] = epochs_off_and_on(off, on);
  const auto optimizer_bytes = [](const nlohmann::ordered_json& epoch) {
    return epoch["optimizer"]["hbm_read_bytes"].get<int64_t>() +
           epoch["optimizer"]["hbm_write_bytes"].get<int64_t>();
  };
  EXPECT_LT(optimizer_bytes(b), optimizer_bytes(a));
  const nlohmann::ordered_json& e = b["hbm_encoding"];
  for (const char* kind : kKinds) {
    EXPECT_GT(e["kinds"][kind]["requests"].get<int64_t>(), 0) << kind;
    EXPECT_GT(e["kinds"][kind]["compression_ratio"].get<double>(), 1.0) << kind;
  }
  // The core's DMA moves no optimizer state with Adam on the unit: all of it is the unit's, every
  // m and v word (all spilled) in and out once per step (the zeroing ran before the epoch).
  const int64_t n = on.trainer().core().machine().adam().n();
  EXPECT_GT(n, 200000);
  EXPECT_EQ(e["kinds"]["optimizer_state"]["raw_bytes"].get<int64_t>(), 2 * 2 * 8 * n);
}

// Real training tensors (the HBM words each kind's roles cover after two steps: weights, their
// gradients, Adam's m and v, activations of the last step) round-trip losslessly as fp32 and as
// bf16 patterns, for several group sizes and delta widths.
TEST(HbmEncodingTraining, RealTrainingTensorsRoundTripLosslessly) {
  const TrainingRunOptions o = options({{"core.hbm.exponent_encoding.on", true}});
  ChipTrainer t(o.model, o.config.spec, o.trainer);
  for (int s = 0; s < 2; ++s)
    t.step(data().train.images.data() + s * 8 * 784, data().train.labels.data() + s * 8, 8);
  const compiler::CompiledProgram& p = t.program(8, true);
  std::vector<uint32_t> words[core::kNumHbmKinds];
  for (const core::HbmRole& r : p.hbm_roles) {
    std::vector<uint32_t>& w = words[static_cast<size_t>(r.kind)];
    const size_t at = w.size();
    w.resize(at + static_cast<size_t>(r.words));
    t.core().state().hbm.read_block(r.hbm, w.data() + at, r.words);
  }
  for (int k = 0; k < 4; ++k) {
    const std::vector<uint32_t>& w = words[k];
    ASSERT_GT(w.size(), 1000u) << kKinds[k];
    EXPECT_GT(std::count_if(w.begin(), w.end(), [](uint32_t x) { return (x & 0x7fffffffu) != 0; }),
              100)
        << kKinds[k];
    std::vector<uint32_t> bf16(w.size());
    for (size_t i = 0; i < w.size(); ++i) bf16[i] = w[i] >> 16;
    for (int group : {4, 16, 64})
      for (int delta : {2, 3, 5}) {
        const numerics::ExponentCodecConfig f32{group, delta, 23}, b16{group, delta, 7};
        EXPECT_EQ(numerics::exponent_decode(numerics::exponent_encode(w, f32)), w)
            << kKinds[k] << group << delta;
        EXPECT_EQ(numerics::exponent_decode(numerics::exponent_encode(bf16, b16)), bf16)
            << kKinds[k] << group << delta;
      }
  }
}

// 4 features -> dense (8) -> relu -> dense (4 classes) on 4 x 4 "images".
TEST(PeEnergy, EpochEnergyCountsTheMxuOfThePeThatRan) {
  Dataset train, test;
  for (Dataset* d : {&train, &test}) {
    d->name = "ramp";
    d->count = 8;
    d->rows = d->cols = 4;
    d->classes = 4;
    for (int i = 0; i < 8 * 16; ++i) d->images.push_back(static_cast<float>(i % 7) * 0.25f - 0.5f);
    for (int i = 0; i < 8; ++i) d->labels.push_back(i % 4);
  }
  auto run = [&](const char* pe) {
    TrainingRunOptions o = options({{"core.mxu.pe", pe}});
    o.model_name = "tiny";
    o.model = graph::ModelSpec{
        "tiny",
        {16},
        4,
        {{graph::LayerKind::kDense, 8}, {graph::LayerKind::kRelu}, {graph::LayerKind::kDense, 4}}};
    o.trainer.optimizer.kind = graph::OptimizerKind::kSgd;
    o.trainer.optimizer.lr = 0.05;
    TrainingRun r(train, test, o);
    EXPECT_TRUE(r.run());
    return r.report()["epochs"][0];
  };
  const nlohmann::ordered_json bp = run("bf16"), ts = run("term-serial");
  const core::CoreSpec spec = chip_test::tpu_v2_like();
  const nlohmann::ordered_json &bpe = bp["pe"]["total"], &tse = ts["pe"]["total"];
  EXPECT_DOUBLE_EQ(bp["energy_mxu_j"].get<double>(),
                   spec.energy.mac_pj * bpe["macs"].get<double>() * 1e-12);
  EXPECT_DOUBLE_EQ(ts["energy_mxu_j"].get<double>(),
                   (spec.term.term_pj * tse["terms_processed"].get<double>() +
                    spec.term.step_pj * tse["pe_steps"].get<double>()) *
                       1e-12);
  EXPECT_GT(tse["terms_processed"].get<int64_t>(), 0);
  EXPECT_NE(ts["energy_mxu_j"].get<double>(), bp["energy_mxu_j"].get<double>());
  // The rest of the chip does the same work (no static power in the config): the same energy.
  EXPECT_DOUBLE_EQ(ts["energy_j"].get<double>() - ts["energy_mxu_j"].get<double>(),
                   bp["energy_j"].get<double>() - bp["energy_mxu_j"].get<double>());
  EXPECT_EQ(bp["energy_mxu_source"], "bit-parallel: core.energy.mac_pj 2 pJ x MACs");
  EXPECT_EQ(ts["energy_mxu_source"],
            "term-serial: core.mxu.term.term_pj 0.25 pJ x terms processed + core.mxu.term.step_pj "
            "1 pJ x PE steps "
            "(source: " +
                spec.energy.term_source + ")");
}

}  // namespace
}  // namespace tessera::runtime
