// The report reader: tessera reports are told apart by their format tag; anything else (not
// JSON, JSON that is not a report, a report of an older or newer layout, a missing file, a trace
// that is not one) is refused with an error naming the file and why.
#include "htmlreport/input.h"

#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "htmlreport/page.h"
#include "htmlreport/timeline.h"
#include "report/format.h"
#include "support/bad_paths.h"
#include "support/error_of.h"

namespace tessera::htmlreport {
namespace {

std::string why(const std::string& text) {
  try {
    (void)parse_input("r.json", text);
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "r.json");
    return e.why();
  }
  return "accepted";
}

TEST(ReportInput, EachFormatTagNamesItsKind) {
  EXPECT_EQ(parse_input("a.json", R"({"format": "tessera-train", "version": 1})").kind,
            Kind::kTrain);
  EXPECT_EQ(parse_input("a.json", R"({"format": "tessera-stats", "version": 1})").kind,
            Kind::kStats);
  EXPECT_EQ(parse_input("a.json", R"({"format": "tessera-allreduce", "version": 1})").kind,
            Kind::kAllreduce);
  EXPECT_EQ(parse_input("a.json", R"({"format": "tessera-map", "version": 1})").kind, Kind::kMap);
  EXPECT_EQ(parse_input("a.json", R"({"format": "tessera-map-bench", "version": 1})").kind,
            Kind::kMapBench);
  EXPECT_EQ(parse_input("a.json", R"({"format": "tessera-suite", "version": 1})").kind,
            Kind::kSuite);
}

TEST(ReportInput, TheLabelIsTheFileName) {
  EXPECT_EQ(parse_input("runs/a/r.json", R"({"format": "tessera-map", "version": 1})").label,
            "r.json");
}

TEST(ReportInput, TaggedWritesTheTagFirstAndKeepsTheBody) {
  const nlohmann::ordered_json j = report::tagged("stats", nlohmann::ordered_json{{"cycles", 3}});
  EXPECT_EQ(j.dump(), R"({"format":"tessera-stats","version":1,"cycles":3})");
  EXPECT_EQ(parse_input("s.json", j.dump()).data["cycles"], 3);
}

TEST(ReportInput, NotJson_bad) {
  EXPECT_TRUE(why("{\"a\": ").starts_with("not JSON"));
  EXPECT_TRUE(why("{\"a\": 6.3e708}").starts_with("not JSON"));  // a number out of range
}

TEST(ReportInput, JsonThatIsNotAReport_bad) {
  EXPECT_TRUE(why(R"({"a": 1})").starts_with("not a tessera report"));
  EXPECT_TRUE(why("[1, 2]").starts_with("not a tessera report"));
  EXPECT_TRUE(why(R"({"format": "vega", "version": 1})").starts_with("not a tessera report"));
}

TEST(ReportInput, ReportOfAnOlderTesseraWithoutTag_bad) {
  EXPECT_TRUE(why(R"({"model": "mlp", "config_hash": "ab", "epochs": []})")
                  .starts_with("written by an older tessera"));
}

TEST(ReportInput, OtherFormatVersion_bad) {
  EXPECT_EQ(why(R"({"format": "tessera-train", "version": 0})"),
            "format version 0 of tessera-train; this tessera reads version 1");
  EXPECT_EQ(why(R"({"format": "tessera-train"})"), "tessera-train without an integer \"version\"");
}

TEST(ReportInput, UnknownKind_bad) {
  EXPECT_EQ(why(R"({"format": "tessera-acc-width-profile", "version": 1})"),
            "unknown report kind 'tessera-acc-width-profile'");
}

TEST(ReportInput, MissingFileAndDirectory_bad) {
  const testing::BadPaths p = testing::bad_paths("htmlreport");
  EXPECT_EQ(testing::error_of([&] { read_input(p.missing); }), p.missing + ": cannot open report");
  EXPECT_EQ(testing::error_of([&] { read_input(p.directory); }),
            p.directory + ": is a directory, not a file");
}

TEST(ReportTimeline, ANonTrace_bad) {
  EXPECT_THROW(parse_timeline("t.json", R"({"a": []})"), Error);
  EXPECT_THROW(parse_timeline("t.json", "{"), Error);
}

TEST(ReportTimeline, AnIdOrCountOutOfRange_bad) {
  EXPECT_EQ(testing::error_of([] {
              parse_timeline("t.json", R"({"traceEvents": [{"ph": "X", "tid": 2.2e50}]})");
            }),
            "t.json: bad trace: an event's \"tid\" is 2.2e+50, not an integer within +-2^53");
  EXPECT_EQ(testing::error_of([] {
              parse_timeline("t.json",
                             R"({"traceEvents": [], "otherData": {"dropped_events": 1.5}})");
            }),
            "t.json: bad trace: \"otherData\".\"dropped_events\" is 1.5, not an integer within "
            "+-2^53");
}

TEST(ReportTimeline, TesseraTracesAreDrawnInCycles) {
  const Json t = parse_timeline("t.json", R"({"traceEvents": [
    {"name": "push", "ph": "X", "tid": 1, "ts": 0.5, "dur": 2, "args": {"cycle": 7, "cycles": 3}}]})");
  EXPECT_EQ(t["unit"], "cycles");
  EXPECT_EQ(t["tracks"][0]["start_delta"], Json::parse("[7.0]"));
  EXPECT_EQ(t["end"], 10.0);
}

TEST(ReportTimeline, SpansAreKeptPerTrackInStartOrder) {
  const Json t = parse_timeline("t.json", R"({"traceEvents": [
    {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "mxu"}},
    {"name": "push", "ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 2, "args": {"detail": "x"}},
    {"name": "pop", "ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {}},
    {"name": "occupancy", "ph": "C", "pid": 1, "tid": 2, "ts": 1, "args": {"n": 3}}],
    "otherData": {"dropped_events": 4}})");
  ASSERT_EQ(t["tracks"].size(), 1u);
  EXPECT_EQ(t["tracks"][0]["name"], "mxu");
  EXPECT_EQ(t["tracks"][0]["start_delta"], Json::parse("[1.0, 4.0]"));
  EXPECT_EQ(t["unit"], "us");  // the spans have no args.cycle
  EXPECT_EQ(t["names"][t["tracks"][0]["kind"][0].get<int>()], "pop");
  EXPECT_EQ(t["end"], 7.0);
  EXPECT_EQ(t["events"], 2);
  EXPECT_EQ(t["dropped"], 4);
}

TEST(ReportPage, FieldsOfTheWrongTypeGiveAnErrorNotACrash) {
  for (const char* text :
       {R"({"format": "tessera-train", "version": 1, "epochs": 3})",
        R"({"format": "tessera-train", "version": 1, "epochs": [1, {"pe": 2}]})",
        R"({"format": "tessera-train", "version": 1,
            "epochs": [{"pe": {"pe": 5, "layers": [{}]}}]})",
        R"({"format": "tessera-stats", "version": 1, "stalls": [1], "units": 2})",
        R"({"format": "tessera-map", "version": 1, "placement": [{"x": -9}],
                               "routes": [{"hops": "EEQ", "src": 3}]})",
        R"({"format": "tessera-map-bench", "version": 1, "results": [{}]})",
        R"({"format": "tessera-map", "version": 1, "placement": [{"community": 1e300},
                               {"community": -2}, {"community": "a"}]})",
        R"({"format": "tessera-train", "version": 1, "epochs": [{"processors": 2, "per_step":
            {"seconds": [1, "a", null], "compute_seconds": 3, "supersteps": [1e300]}}]})",
        R"({"format": "tessera-suite", "version": 1, "config": [], "rows": [{"supported": true,
            "cycles_over_bound": "x"}, {"supported": "no"}, 3]})",
        R"({"format": "tessera-suite", "version": 1, "rows": {}})"}) {
    try {
      (void)render_page(page_data({parse_input("r.json", text)}, nullptr), "");
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace tessera::htmlreport
