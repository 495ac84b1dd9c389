// `tessera train --model bow` on bad flags: one line on stderr naming the flag, non-zero exit,
// before the corpus is read (a missing corpus is named too). Runs the built `tessera` executable
// (skipped when it has not been built in this build tree).
#include <algorithm>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "support/cli_run.h"

namespace {

class BowCli : public ::testing::TestWithParam<std::pair<const char*, const char*>> {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

TEST_P(BowCli, BadFlag_bad) {
  const auto [flags, want] = GetParam();
  const tessera::testing::CliResult r = tessera::testing::run_cli(
      std::string("train --model bow --data-dir /nonexistent/dir ") + flags, /*keep_stderr=*/true);
  const std::string& err = r.out;  // stderr (stdout dropped)
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(err.rfind("tessera: error: ", 0), 0u) << err;
  EXPECT_NE(err.find(want), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, BowCli,
    ::testing::Values(std::pair{"--dataset fortunes", "--model bow trains on fortunes-topics"},
                      std::pair{"--executor gpu", "'gpu': expected chip or host-f32"},
                      std::pair{"--chips 2", "--model bow trains on one processor"},
                      std::pair{"--vmem-handoff-bytes -1", "--vmem-handoff-bytes"},
                      std::pair{"--executor host-f32 --checkpoint-dir d",
                                "bow checkpoints are the chip trainer's"},
                      std::pair{"--resume", "--resume: needs --checkpoint-dir"},
                      std::pair{"--checkpoint-every 5",
                                "--checkpoint-every: needs --checkpoint-dir"},
                      std::pair{"", "/nonexistent/dir"}));

}  // namespace
