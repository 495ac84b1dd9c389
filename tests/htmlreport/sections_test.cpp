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

TEST(ReportSections, AWorkloadSuiteShowsTheSuite) {
  EXPECT_EQ(section_ids({"suite.json"}), (Ids{"summary", "suite"}));
}

// The charts of section `id` of the page of `seeds`, by type.
std::vector<Json> charts_of(const std::vector<std::string>& seeds, const std::string& id,
                            const std::string& type) {
  std::vector<Input> in;
  for (const std::string& s : seeds)
    in.push_back(read_input(std::string(TESSERA_SOURCE_DIR) + "/fuzz/seeds/fuzz_report/" + s));
  std::vector<Json> out;
  const Json page = page_data(in, nullptr);
  for (const Json& s : page["sections"])
    if (s["id"] == id)
      for (const Json& c : s["charts"])
        if (c["type"] == type) out.push_back(c);
  return out;
}

TEST(ReportSections, ADataParallelRunsStepsAreOnATimelineAndInStackedBarsThatAddUpToTheStep) {
  const Json report = read_input(std::string(TESSERA_SOURCE_DIR) +
                                 "/fuzz/seeds/fuzz_report/train-data-parallel.json")
                          .data;
  const Json& per_step = report["epochs"][0]["per_step"];
  const size_t steps = per_step["seconds"].size();
  ASSERT_GT(steps, 0u);
  const auto timelines = charts_of({"train-data-parallel.json"}, "many-chip", "timeline");
  ASSERT_EQ(timelines.size(), 1u);
  EXPECT_EQ(timelines[0]["tracks"].size(), 3u);
  EXPECT_EQ(timelines[0]["events"], 3 * steps);
  double total = 0;
  for (const Json& s : per_step["seconds"]) total += s.get<double>();
  EXPECT_NEAR(timelines[0]["end"].get<double>(), total, 1e-9 * total);
  for (const Json& bars : charts_of({"train-data-parallel.json"}, "many-chip", "bars")) {
    if (!bars.contains("stacked")) continue;
    ASSERT_EQ(bars["categories"].size(), steps);
    for (size_t k = 0; k < steps; ++k) {
      double sum = 0;
      for (const Json& s : bars["series"]) sum += s["values"][k].get<double>();
      const double step = per_step["seconds"][k];
      EXPECT_NEAR(sum, step, 1e-9 * step) << "step " << k + 1;
    }
  }
}

TEST(ReportSections, AnAllReducesSuperstepsAreOnATimeline) {
  const Json report =
      read_input(std::string(TESSERA_SOURCE_DIR) + "/fuzz/seeds/fuzz_report/allreduce.json").data;
  const Json& s = report["superstep_spans"];
  const size_t n = report["supersteps"];
  ASSERT_EQ(s["arrived"].size(), n);
  size_t barriers_before = 0;  // supersteps whose exchange waits for a barrier
  for (size_t k = 0; k < n; ++k) barriers_before += s["posted"][k] > s["arrived"][k];
  const auto timelines = charts_of({"allreduce.json"}, "many-chip", "timeline");
  ASSERT_EQ(timelines.size(), 1u);
  EXPECT_EQ(timelines[0]["tracks"].size(), 3u);  // compute, barrier, exchange
  EXPECT_EQ(timelines[0]["events"], 3 * n + barriers_before);
  EXPECT_DOUBLE_EQ(timelines[0]["end"].get<double>(), s["released"][n - 1].get<double>());
}

TEST(ReportSections, TheOtherKernelsOfATrainingStepAreChartedAndTabledPerOp) {
  Input run = read_input(std::string(TESSERA_SOURCE_DIR) + "/fuzz/seeds/fuzz_report/train.json");
  Json& pe = run.data["epochs"].back()["pe"];
  pe["kernels"] = Json::parse(R"([{"op": "relu", "cycles": 300, "hbm_bytes": 4096,
      "cycle_share": 0.25}, {"op": "mul", "cycles": 100, "hbm_bytes": 0, "cycle_share": 0.5}])");
  const Json page = page_data({run}, nullptr);
  const Json* layers = nullptr;
  for (const Json& s : page["sections"])
    if (s["id"] == "layers") layers = &s;
  ASSERT_NE(layers, nullptr);
  const Json* bars = nullptr;
  const Json* table = nullptr;
  for (const Json& c : (*layers)["charts"]) {
    if (c.value("title", "").starts_with("Issue cycles of the other kernels")) bars = &c;
    if (c.value("title", "").starts_with("Other kernels per op")) table = &c;
  }
  ASSERT_NE(bars, nullptr);
  EXPECT_EQ((*bars)["categories"], Json::parse(R"(["relu", "mul"])"));
  ASSERT_NE(table, nullptr);
  ASSERT_EQ((*table)["rows"].size(), 2u);
  EXPECT_EQ((*table)["rows"][0][1], "relu");
  EXPECT_EQ((*table)["rows"][0][2], 300.0);
  EXPECT_EQ((*table)["rows"][1][4], 0.5);
  // Without the block the section has no such charts.
  pe.erase("kernels");
  const Json without = page_data({run}, nullptr);
  for (const Json& s : without["sections"]) {
    if (s["id"] != "layers") continue;
    for (const Json& c : s["charts"])
      EXPECT_FALSE(c.value("title", "").starts_with("Other kernels per op"));
  }
}

TEST(ReportSections, AMappingColoursItsCoresByCommunity) {
  const auto meshes = charts_of({"map.json"}, "mapper", "mesh");
  ASSERT_EQ(meshes.size(), 1u);
  EXPECT_EQ(meshes[0]["colour_by"], "community");
  for (const Json& c : meshes[0]["cells"]) EXPECT_GE(c["community"].get<int>(), 0);
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
