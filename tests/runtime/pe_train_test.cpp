// Training with the MXU's work attributed per layer and phase (runtime/pe_attribution.h,
// compiler/mxu_regions.h), and `tessera train --pe/--set`.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/chip_test_data.h"
#include "runtime/pe_attribution.h"
#include "runtime/run_config.h"
#include "runtime/train_chip.h"
#include "support/error_of.h"

namespace tessera::runtime {
namespace {

using compiler::MxuPhase;

// 16 features -> dense1 (8) -> relu -> dense2 (4 classes); batch 8 = one sublane block.
graph::ModelSpec tiny() {
  return {
      "tiny",
      {16},
      4,
      {{graph::LayerKind::kDense, 8}, {graph::LayerKind::kRelu}, {graph::LayerKind::kDense, 4}}};
}

struct TinyRun {
  PeTally tally;
  core::MxuStats totals;              // the unit's own counters after the steps
  int64_t cycles = 0, hbm_bytes = 0;  // the core's cycles and HBM bytes after the steps
};

// `steps` SGD steps on batch 8 of `images` (8 x 16) with labels 0..3.
TinyRun train_tiny(const core::CoreSpec& spec, const std::vector<float>& images, int steps) {
  ChipTrainerOptions o;
  o.batch = 8;
  o.optimizer.kind = graph::OptimizerKind::kSgd;
  ChipTrainer t(tiny(), spec, o);
  const std::vector<int32_t> labels = {0, 1, 2, 3, 0, 1, 2, 3};
  TinyRun r;
  for (int s = 0; s < steps; ++s) {
    const PeWork before = t.pe_attribution().work();
    t.step(images.data(), labels.data(), 8);
    r.tally.add_step(t.pe_attribution(), t.pe_attribution().work() - before);
  }
  r.totals = t.core().machine().mxu().stats();
  r.cycles = t.core().cycles();
  const core::EventCounts& ev = t.core().machine().events();
  r.hbm_bytes = ev.hbm_read_bytes + ev.hbm_write_bytes;
  return r;
}

std::vector<float> ramp_images() {
  std::vector<float> x(8 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  return x;
}

struct Expect {
  const char* layer;
  MxuPhase phase;
  int64_t pushes_per_step;
};

// Program order: forward dense1, dense2; autodiff visits dense2 (input gradient, then weight
// gradient), then dense1 (weight gradient only: the images need no gradient). Pushes of an
// M x K x N GEMM on an 8-sublane, 128 x 128 MXU: ceil(M/8) ceil(K/128) ceil(N/128); only the
// weight gradient of dense1 (x^T: 16 x 8) has M = 16.
const Expect kTiny[] = {{"dense1", MxuPhase::kForward, 1},
                        {"dense2", MxuPhase::kForward, 1},
                        {"dense2", MxuPhase::kInputGrad, 1},
                        {"dense2", MxuPhase::kWeightGrad, 1},
                        {"dense1", MxuPhase::kWeightGrad, 2}};

void expect_tiny_keys(const PeTally& t, int steps) {
  ASSERT_EQ(t.keys.size(), std::size(kTiny));
  for (size_t i = 0; i < t.keys.size(); ++i) {
    EXPECT_EQ(t.keys[i].layer, kTiny[i].layer) << i;
    EXPECT_EQ(t.keys[i].phase, kTiny[i].phase) << i;
    EXPECT_EQ(t.work[i].pushes, kTiny[i].pushes_per_step * steps) << i;
    EXPECT_EQ(t.work[i].macs, t.work[i].pushes * 8 * 128 * 128) << i;
  }
  // No mmul outside the regions: only the other bundles' issue cycles and HBM bytes go to other.
  core::MxuWork no_mxu_work;
  no_mxu_work.cycles = t.other.cycles;
  no_mxu_work.hbm_bytes = t.other.hbm_bytes;
  EXPECT_EQ(t.other, no_mxu_work);
  EXPECT_EQ(t.steps, steps);
}

core::MxuWork sum(const PeTally& t) {
  core::MxuWork s = t.other;
  for (const core::MxuWork& w : t.work) s += w;
  for (const core::MxuWork& w : t.op_work) s += w;
  return s;
}

TEST(PeTrain, EveryMmulOfATrainingStepIsAttributedToItsLayerAndPhase) {
  const core::CoreSpec spec = chip_test::tpu_v2_like();
  ASSERT_EQ(spec.sublanes, 8);
  ASSERT_EQ(spec.mxu_rows, 128);
  ASSERT_EQ(spec.mxu_cols, 128);
  const TinyRun r = train_tiny(spec, ramp_images(), 2);
  expect_tiny_keys(r.tally, 2);
  // Nothing else runs on the MXU in a step: the keys add up to the unit's counters.
  const core::MxuWork all = sum(r.tally);
  EXPECT_EQ(all.pushes, r.totals.pushes);
  EXPECT_EQ(all.macs, r.totals.macs);
  EXPECT_EQ(all.busy_cycles, r.totals.busy_cycles);
  EXPECT_EQ(all.busy_cycles, 8 * all.pushes);  // bf16 PEs: one sublane row per cycle
}

TEST(PeTrain, KernelsHaveIssueCyclesAndHbmBytesWithinTheSteps) {
  const core::CoreSpec spec = chip_test::tpu_v2_like();
  const TinyRun r = train_tiny(spec, ramp_images(), 2);
  for (size_t i = 0; i < r.tally.keys.size(); ++i) {
    EXPECT_GT(r.tally.work[i].cycles, 0) << i;
    EXPECT_GT(r.tally.work[i].hbm_bytes, 0) << i;  // every MXU kernel moves its tiles by DMA
  }
  // Issue cycles and HBM bytes of the attributed (main) parts cannot exceed the whole steps'.
  const core::MxuWork all = sum(r.tally);
  EXPECT_LE(all.cycles, r.cycles);
  EXPECT_LE(all.hbm_bytes, r.hbm_bytes);
  EXPECT_GT(all.cycles, 0);
}

TEST(PeTrain, OtherKernelsAreAttributedByOpAndTheStepAddsUp) {
  const core::CoreSpec spec = chip_test::tpu_v2_like();
  const TinyRun one = train_tiny(spec, ramp_images(), 1);
  const PeTally& t = one.tally;
  // The non-MXU nodes of the tiny step, each op once (no MXU op among them).
  for (const char* op : {"relu", "relu_grad", "softmax_cross_entropy"})
    EXPECT_NE(std::find(t.ops.begin(), t.ops.end(), op), t.ops.end()) << op;
  for (const char* mxu_op : {"matmul", "conv2d", "batch_matmul"})
    EXPECT_EQ(std::find(t.ops.begin(), t.ops.end(), mxu_op), t.ops.end()) << mxu_op;
  ASSERT_EQ(t.op_work.size(), t.ops.size());
  int64_t op_cycles = 0;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    EXPECT_GT(t.op_work[i].cycles, 0) << t.ops[i];
    EXPECT_EQ(t.op_work[i].pushes, 0) << t.ops[i];
    op_cycles += t.op_work[i].cycles;
  }
  // Only bundles outside every node's kernel are left over: far fewer than the kernels'.
  EXPECT_LT(t.other.cycles, op_cycles / 4);
  // The report: layers + kernels + other = total, and the kernels' shares are of that total.
  const nlohmann::ordered_json j = pe_json(spec, t);
  int64_t parts = j["other"]["cycles"].get<int64_t>(), kernels = 0;
  for (const auto& l : j["layers"]) parts += l["cycles"].get<int64_t>();
  for (const auto& k : j["kernels"]) kernels += k["cycles"].get<int64_t>();
  EXPECT_EQ(kernels, op_cycles);
  EXPECT_EQ(parts + kernels, j["total"]["cycles"].get<int64_t>());
  EXPECT_EQ(j["total"]["cycles"].get<int64_t>(), sum(t).cycles);
  const auto& k0 = j["kernels"][0];
  EXPECT_DOUBLE_EQ(k0["cycle_share"].get<double>(),
                   k0["cycles"].get<double>() / j["total"]["cycles"].get<double>());
  // Two steps of the same program: each op's work doubles.
  const TinyRun two = train_tiny(spec, ramp_images(), 2);
  ASSERT_EQ(two.tally.ops, t.ops);
  for (size_t i = 0; i < t.ops.size(); ++i)
    EXPECT_EQ(two.tally.op_work[i].cycles, 2 * t.op_work[i].cycles) << t.ops[i];
}

TEST(PeTrain, TermSerialTermsAddUpPerLayerAndZeroInputsProcessNoTerms) {
  core::CoreSpec spec = chip_test::tpu_v2_like();
  spec.mxu_pe = core::MxuPe::TermSerial;
  const int lanes = spec.term.tile.pe.lanes;
  ASSERT_EQ(spec.term.tile.serial, numerics::TermSerialOperand::Inputs);
  const TinyRun r = train_tiny(spec, std::vector<float>(8 * 16, 0.0f), 1);
  expect_tiny_keys(r.tally, 1);
  const core::MxuWork all = sum(r.tally);
  EXPECT_EQ(all.term, r.totals.term);
  EXPECT_EQ(all.busy_cycles, r.totals.busy_cycles);
  for (size_t i = 0; i < r.tally.keys.size(); ++i) {
    const core::MxuWork& w = r.tally.work[i];
    // One PE per output of a push (8 x 128), ceil(128 / lanes) steps each, 8 term slots per lane.
    EXPECT_EQ(w.term.pe_steps, w.pushes * 8 * 128 * ((128 + lanes - 1) / lanes)) << i;
    EXPECT_EQ(w.term.terms_processed + w.term.terms_skipped_zero + w.term.terms_skipped_oob,
              8 * lanes * w.term.pe_steps)
        << i;
  }
  // dense1's serial operand is the all-zero images (forward) or their transpose (weight
  // gradient): every slot is a zero skip.
  for (size_t i : {size_t{0}, size_t{4}}) {
    EXPECT_EQ(r.tally.work[i].term.terms_processed, 0) << i;
    EXPECT_EQ(r.tally.work[i].term.terms_skipped_oob, 0) << i;
  }
  EXPECT_GT(r.tally.work[3].term.terms_processed, 0);  // dense2's weight gradient: dy^T is not zero
}

TEST(PeTrain, ReportSumsPhasesAndLayers) {
  core::CoreSpec spec = chip_test::tpu_v2_like();
  spec.mxu_pe = core::MxuPe::TermSerial;
  const TinyRun r = train_tiny(spec, ramp_images(), 1);
  const nlohmann::ordered_json j = pe_json(spec, r.tally);
  EXPECT_EQ(j["pe"], "term-serial");
  EXPECT_EQ(j["steps"], 1);
  EXPECT_EQ(j["total"]["pushes"], 6);
  EXPECT_EQ(j["phases"]["forward"]["pushes"], 2);
  EXPECT_EQ(j["phases"]["input_grad"]["pushes"], 1);
  EXPECT_EQ(j["phases"]["weight_grad"]["pushes"], 3);
  EXPECT_EQ(j["layers"].size(), 5u);
  EXPECT_EQ(j["other"]["pushes"], 0);
  int64_t cycles = 0, processed = 0;
  for (const auto& l : j["layers"]) {
    cycles += l["busy_cycles"].get<int64_t>();
    processed += l["terms_processed"].get<int64_t>();
  }
  EXPECT_EQ(j["total"]["busy_cycles"].get<int64_t>(), cycles);
  EXPECT_EQ(j["total"]["terms_processed"].get<int64_t>(), processed);
  const auto& t = j["total"];
  EXPECT_DOUBLE_EQ(t["speedup_equal_pe"].get<double>(),
                   t["bf16_busy_equal_pe"].get<double>() / t["busy_cycles"].get<double>());
  EXPECT_DOUBLE_EQ(t["speedup_equal_area"].get<double>(),
                   t["speedup_equal_pe"].get<double>() / spec.term.area_ratio);
}

TEST(PeTrain, TallyRoundTripsThroughItsCheckpointForm) {
  core::CoreSpec spec = chip_test::tpu_v2_like();
  spec.mxu_pe = core::MxuPe::TermSerial;
  const PeTally t = train_tiny(spec, ramp_images(), 1).tally;
  const PeTally back = PeTally::from_json(t.to_json(), "ck");
  ASSERT_EQ(back.keys.size(), t.keys.size());
  for (size_t i = 0; i < t.keys.size(); ++i) {
    EXPECT_EQ(back.keys[i].layer, t.keys[i].layer);
    EXPECT_EQ(back.keys[i].phase, t.keys[i].phase);
    EXPECT_EQ(back.work[i], t.work[i]);
  }
  EXPECT_EQ(back.other, t.other);
  EXPECT_EQ(back.steps, t.steps);
  ASSERT_FALSE(t.ops.empty());
  EXPECT_EQ(back.ops, t.ops);
  EXPECT_EQ(back.op_work, t.op_work);
  // A tally written before ops were attributed reads with none.
  nlohmann::ordered_json old_form = t.to_json();
  old_form.erase("ops");
  EXPECT_TRUE(PeTally::from_json(old_form, "ck").ops.empty());
}

TEST(PeTrain, CorruptTally_bad) {
  nlohmann::ordered_json j = PeTally{}.to_json();
  j["other"] = nlohmann::ordered_json::array({1, 2});
  EXPECT_EQ(testing::error_of([&] { PeTally::from_json(j, "ck"); }),
            "ck: corrupt checkpoint progress (pe counters)");
  j = PeTally{}.to_json();
  j["keys"].push_back(
      {{"layer", "dense1"}, {"phase", "sideways"}, {"work", PeTally{}.to_json()["other"]}});
  EXPECT_EQ(testing::error_of([&] { PeTally::from_json(j, "ck"); }),
            "ck: corrupt checkpoint progress (pe)");
  j = PeTally{}.to_json();
  j["ops"] = "relu";
  EXPECT_EQ(testing::error_of([&] { PeTally::from_json(j, "ck"); }),
            "ck: corrupt checkpoint progress (pe)");
  j["ops"] = nlohmann::ordered_json::array({{{"op", 3}, {"work", PeTally{}.to_json()["other"]}}});
  EXPECT_EQ(testing::error_of([&] { PeTally::from_json(j, "ck"); }),
            "ck: corrupt checkpoint progress (pe)");
}

TEST(PeTrain, ConfigOverridesAreResolvedAndHashedLikeFileValues) {
  const RunConfig base = load_run_config("");
  const RunConfig o =
      load_run_config("", {{"core.mxu.pe", "term-serial"}, {"core.mxu.term.acc_width", 12}});
  EXPECT_EQ(o.spec.mxu_pe, core::MxuPe::TermSerial);
  EXPECT_EQ(o.spec.term.tile.pe.acc_fraction_bits, 12);
  EXPECT_EQ(o.resolved["core.mxu.pe"], "term-serial");
  EXPECT_EQ(o.resolved["core.mxu.term.acc_width"], 12);
  EXPECT_NE(o.hash, base.hash);
  // Spelling out a default changes nothing.
  EXPECT_EQ(load_run_config("", {{"core.mxu.pe", "bf16"}}).hash, base.hash);
  const std::string file = std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json";
  const RunConfig f = load_run_config(file, {{"core.mxu.term.acc_width", 10}});
  EXPECT_EQ(f.spec.term.tile.pe.acc_fraction_bits, 10);
  EXPECT_EQ(f.spec.sublanes, 8);
}

TEST(PeTrain, BadConfigOverride_bad) {
  EXPECT_EQ(testing::error_of([] {
              load_run_config("", {{"core.mxu.pe", "quantum"}});
            }),
            "<built-in defaults> + overrides: key 'core.mxu.pe': 'quantum' is not one of: bf16, "
            "term-serial");
  EXPECT_EQ(
      testing::error_of([] {
        load_run_config("", {{"core.mxu.term.acc_wdth", 12}});
      }),
      "<built-in defaults> + overrides: key 'core.mxu.term.acc_wdth': unknown key (did you mean "
      "'core.mxu.term.acc_width'?)");
  EXPECT_EQ(testing::error_of([] {
              load_run_config("", {{"core.mxu.pe.x", 1}});
            }),
            "<built-in defaults> + overrides: key 'core.mxu.pe': expected a string, got {\"x\":1}");
  const std::string file = std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json";
  EXPECT_EQ(testing::error_of([&] {
              load_run_config(file, {{"core.mxu.pe.x", 1}});
            }),
            file + ": cannot set 'core.mxu.pe.x': a part of it is not an object");
}

// `tessera train --pe ... --set ...` (skipped without the binary or the dataset).
std::string tessera() {
  return std::string(TESSERA_BINARY_DIR) + "/src/cli/tessera";
}
bool have_fashion_mnist() {
  return std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz");
}

TEST(PeTrainCli, TermSerialRunReportsPerPhaseAndLayer) {
  if (!std::filesystem::exists(tessera()) || !have_fashion_mnist())
    GTEST_SKIP() << "tessera or dataset missing";
  const std::string dir = std::string(TESSERA_BINARY_DIR) + "/test-scratch/pe-train";
  std::filesystem::create_directories(dir);
  const std::string report = dir + "/r.json";
  std::filesystem::remove(report);
  const std::string cmd =
      tessera() + " train --steps 1 --batch 8 --epochs 1 --optimizer sgd --pe term-serial " +
      "--set core.mxu.term.acc_width=16 --report " + report + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const nlohmann::json r = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(r["resolved_config"]["core.mxu.pe"], "term-serial");
  EXPECT_EQ(r["resolved_config"]["core.mxu.term.acc_width"], 16);
  const nlohmann::json& pe = r["epochs"][0]["pe"];
  EXPECT_EQ(pe["pe"], "term-serial");
  EXPECT_EQ(pe["steps"], 1);
  EXPECT_EQ(pe["other"]["pushes"], 0);
  // mlp: 3 dense layers; the first has no input gradient.
  EXPECT_EQ(pe["layers"].size(), 8u);
  EXPECT_GT(pe["phases"]["input_grad"]["terms_processed"].get<int64_t>(), 0);
}

}  // namespace
}  // namespace tessera::runtime
