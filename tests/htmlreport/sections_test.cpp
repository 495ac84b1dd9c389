// Which sections a page has follows from which reports it is given (the shipped fuzz seeds are
// small real reports of each kind).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "htmlreport/page.h"

namespace tessera::htmlreport {
namespace {

std::vector<std::string> section_ids(const std::vector<std::string>& seeds) {
  std::vector<Input> in;
  for (const std::string& s : seeds)
    in.push_back(read_input(std::string(TESSERA_SOURCE_DIR) + "/fuzz/seeds/fuzz_report/" + s));
  std::vector<std::string> ids;
  const Json page = page_data(in, nullptr);
  for (const Json& s : page["sections"]) ids.push_back(s["id"]);
  return ids;
}

using Ids = std::vector<std::string>;

TEST(ReportSections, RunStatisticsShowStallsUtilisationAndEnergy) {
  EXPECT_EQ(section_ids({"stats.json"}), (Ids{"summary", "stalls", "utilisation", "energy"}));
}

TEST(ReportSections, TwoTrainingRunsAreAlsoShownSideBySide) {
  EXPECT_EQ(
      section_ids({"train.json", "train-term-serial.json"}),
      (Ids{"summary", "utilisation", "energy", "training", "layers", "term-serial", "compare"}));
}

TEST(ReportSections, DataParallelAndAllReduceRunsShowManyChips) {
  const Ids ids = section_ids({"train-data-parallel.json", "allreduce.json"});
  EXPECT_NE(std::find(ids.begin(), ids.end(), "many-chip"), ids.end());
}

TEST(ReportSections, MapperRunsShowTheMapper) {
  EXPECT_EQ(section_ids({"map.json", "map-bench.json"}), (Ids{"summary", "mapper"}));
}

TEST(ReportSections, TheSummaryHasAColumnPerRun) {
  const Json d = page_data(
      {read_input(std::string(TESSERA_SOURCE_DIR) + "/fuzz/seeds/fuzz_report/stats.json")},
      nullptr);
  const Json& facts = d["sections"][0]["charts"][0];
  EXPECT_EQ(facts["runs"], Json::parse(R"(["stats.json"])"));
  for (const Json& row : facts["rows"]) EXPECT_EQ(row["values"].size(), 1u);
}

}  // namespace
}  // namespace tessera::htmlreport
