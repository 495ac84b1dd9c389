// Shared by the runtime tests that train the gpt decoder through the run loop: a tiny model (d 32,
// 2 heads, 1 block, context 16), byte windows of synthetic text (chip_test::synthetic_text), and
// the single-chip run's options (Adam on the Adam unit, lr 1e-2, seed 7, one epoch of `steps`), and
// an interrupted run resumed from its checkpoint.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "runtime/training_run.h"
#include "support/error_of.h"

namespace tessera::runtime::gpt_test {

inline constexpr graph::GptSpec kTiny{.d_model = 32, .heads = 2, .layers = 1, .context = 16};

// Training windows of 4,000 bytes of text (every start), validation: 8 windows of 200 bytes.
struct Data {
  Dataset train = text_dataset("text/train", "", chip_test::synthetic_text(4000, 1), kTiny.context,
                               4000 - kTiny.context);
  Dataset test =
      text_dataset("text/validation", "", chip_test::synthetic_text(200, 2), kTiny.context, 8);
};

inline const Data& data() {
  static const Data d;
  return d;
}

inline TrainingRunOptions options(int batch, int64_t steps) {
  TrainingRunOptions o;
  o.model_name = "gpt";
  o.model = TrainModel(kTiny);
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.epochs = 1;
  o.steps_limit = steps;
  o.trainer.batch = batch;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-2;
  o.trainer.seed = 7;
  return o;
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// A Run of `o` (which checkpoints) stopped after step `stop`, then a Run of `o` resumed from
// `checkpoint` (a file name), returned before it runs. Checks the checkpoint's identity (model gpt,
// kTiny's sizes) and that a gpt of other sizes does not resume from it.
template <class Run, class Options>
std::unique_ptr<Run> interrupted_and_resumed(Options o, int64_t stop,
                                             const std::string& checkpoint) {
  {
    Run first(data().train, data().test, o);
    EXPECT_EQ(first.identity()["model"], "gpt");
    EXPECT_EQ(first.identity()["gpt"].dump(),
              R"({"d_model":32,"heads":2,"layers":1,"context":16})");
    TrainingCallbacks cb;
    cb.keep_going = [stop](int64_t step) { return step < stop; };
    EXPECT_FALSE(first.run(cb));
  }
  o.resume = true;
  auto second = std::make_unique<Run>(data().train, data().test, o);
  EXPECT_EQ(std::filesystem::path(second->resumed_from()).filename(), checkpoint);

  Options wider = o;
  wider.model = TrainModel(graph::GptSpec{.d_model = 64, .heads = 2, .layers = 1, .context = 16});
  EXPECT_NE(testing::error_of([&] {
              Run r(data().train, data().test, wider);
            }).find("checkpoint is for gpt {\"d_model\":32"),
            std::string::npos);
  return second;
}

}  // namespace tessera::runtime::gpt_test
