// `tessera report` on bad input: each refusal is exit 1 with the reader's message naming the file,
// and no page is written.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace {

using tessera::testing::run_cli;

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera is not built";
  }
  // stderr of `tessera report FILE -o page.html` with FILE holding `text`, which must fail with 1.
  std::string refusal(const std::string& text) {
    const std::string in = dir.file("in.json"), page = dir.file("page.html");
    tessera::testing::write_bytes(in, text);
    const auto r = run_cli("report " + in + " -o " + page, true);
    EXPECT_EQ(r.status, 1 << 8);
    EXPECT_FALSE(std::filesystem::exists(page));
    return r.out;
  }
  tessera::testing::TempDir dir;
};

TEST_F(ReportCli, NotAReport_bad) {
  EXPECT_EQ(refusal(R"({"hello": 1})"),
            "tessera: error: " + dir.file("in.json") +
                ": not a tessera report (a JSON object with a \"format\" key \"tessera-<kind>\" is "
                "expected)\n");
}

TEST_F(ReportCli, OlderFormat_bad) {
  EXPECT_EQ(refusal(R"({"format": "tessera-stats", "version": 0, "cycles": 1})"),
            "tessera: error: " + dir.file("in.json") +
                ": format version 0 of tessera-stats; this tessera reads version 1\n");
  EXPECT_EQ(refusal(R"({"cycles": 1, "stalls": {}})"),
            "tessera: error: " + dir.file("in.json") +
                ": written by an older tessera (no format tag); re-run the command that made it\n");
}

TEST_F(ReportCli, MissingFile_bad) {
  const auto r = run_cli("report " + dir.file("none.json") + " -o " + dir.file("p.html"), true);
  EXPECT_EQ(r.status, 1 << 8);
  EXPECT_EQ(r.out, "tessera: error: " + dir.file("none.json") + ": cannot open report\n");
}

TEST_F(ReportCli, AReportOfEveryKindMakesAPage) {
  std::string args = "report";
  for (const char* seed : {"train.json", "train-term-serial.json", "train-data-parallel.json",
                           "stats.json", "allreduce.json", "map.json", "map-bench.json"})
    args += std::string(" ") + TESSERA_SOURCE_DIR + "/fuzz/seeds/fuzz_report/" + seed;
  args += " --trace " + std::string(TESSERA_SOURCE_DIR) + "/fuzz/seeds/fuzz_report/trace.json";
  const auto r = run_cli(args + " -o " + dir.file("all.html"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, dir.file("all.html") + "\n");
  EXPECT_GT(std::filesystem::file_size(dir.file("all.html")), 100'000u);  // d3 is embedded
}

}  // namespace
