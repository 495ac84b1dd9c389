// The vector-stream program used for simulator-speed figures: same state on both interpreters,
// the advertised bundle count, and (software-pipelined) no stalls beyond one taken-branch bubble
// per loop trip.
#include "kernels/vector_stream.h"

#include <string>

#include <gtest/gtest.h>

#include "core/core.h"
#include "core/functional.h"
#include "core/state.h"

namespace tessera::kernels {
namespace {

core::CoreSpec config(const std::string& name) {
  return core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/" + name + ".json");
}

TEST(VectorStream, BothInterpretersAgreeAndRunTheAdvertisedBundles) {
  for (const char* name : {"small", "tpu-v2-like"}) {
    SCOPED_TRACE(name);
    const core::CoreSpec spec = config(name);
    const VectorStream vs = make_vector_stream(spec, 50);
    core::Core timed(spec, vs.program);
    timed.run();
    core::FunctionalCore functional(spec, vs.program);
    functional.run();
    EXPECT_EQ(core::diff_architectural_state(timed.state(), functional.state()), "");
    EXPECT_EQ(timed.bundles(), vs.bundles_executed);
    EXPECT_EQ(functional.bundles(), vs.bundles_executed);
  }
}

TEST(VectorStream, IssuesAboutOneBundlePerCycle) {
  const core::CoreSpec spec = config("tpu-v2-like");
  const int64_t iterations = 100;
  const VectorStream vs = make_vector_stream(spec, iterations);
  core::Core timed(spec, vs.program);
  timed.run();
  // At most one redirect bubble per taken branch (latency.branch = 1) and the final drain.
  EXPECT_LE(timed.cycles(), vs.bundles_executed + iterations + 16);
  EXPECT_GE(timed.cycles(), vs.bundles_executed);
}

}  // namespace
}  // namespace tessera::kernels
