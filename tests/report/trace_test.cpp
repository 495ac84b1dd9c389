#include "report/trace.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "common/error.h"

namespace tessera::report {
namespace {

std::vector<nlohmann::json> events_with_ph(const nlohmann::json& trace, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

TEST(Trace, EveryEventHasTheFieldsOfTheChromeFormat) {
  ChromeTrace t("core0", 1e9);
  t.span("scalar", "sadd", 0, 1, "sadd s1, s2, s3");
  t.span("mxu", "mmul", 2, 8, "mmul v1");
  t.counter("mxu", "fifo", 10, 1);
  const auto j = t.to_json();
  ASSERT_TRUE(j.contains("traceEvents"));
  ASSERT_TRUE(j["traceEvents"].is_array());
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e["name"].is_string()) << e;
    ASSERT_TRUE(e["ph"].is_string()) << e;
    EXPECT_EQ(e["pid"], 1) << e;
    ASSERT_TRUE(e["tid"].is_number_integer()) << e;
    if (e["ph"] != "M") {
      EXPECT_TRUE(e["ts"].is_number()) << e;
    }
    if (e["ph"] == "X") {
      EXPECT_TRUE(e["dur"].is_number()) << e;
    }
  }
}

TEST(Trace, MetadataNamesTheProcessAndOneThreadPerTrackInFirstUseOrder) {
  ChromeTrace t("tensor core 0", 700e6);
  t.span("vector", "vadd.f32", 0, 2, "");
  t.span("mxu", "mmul", 1, 8, "");
  t.span("vector", "vmul.f32", 3, 4, "");
  t.counter("eup fifo", "occupancy", 4, 2);
  const auto j = t.to_json();
  const auto meta = events_with_ph(j, "M");
  ASSERT_EQ(meta.size(), 1u + 2u * 3u);
  EXPECT_EQ(meta[0]["name"], "process_name");
  EXPECT_EQ(meta[0]["args"]["name"], "tensor core 0");
  std::map<std::string, int> tid_of;
  std::map<int, int> sort_of;
  for (const auto& m : meta) {
    if (m["name"] == "thread_name") tid_of[m["args"]["name"]] = m["tid"];
    if (m["name"] == "thread_sort_index") sort_of[m["tid"]] = m["args"]["sort_index"];
  }
  EXPECT_EQ(tid_of, (std::map<std::string, int>{{"vector", 1}, {"mxu", 2}, {"eup fifo", 3}}));
  EXPECT_EQ(sort_of, (std::map<int, int>{{1, 1}, {2, 2}, {3, 3}}));
  const auto spans = events_with_ph(j, "X");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0]["tid"], 1);
  EXPECT_EQ(spans[1]["tid"], 2);
  EXPECT_EQ(spans[2]["tid"], 1);
}

TEST(Trace, SpansConvertCyclesToMicrosecondsWithTheClock) {
  ChromeTrace t("core", 500e6);  // 2 ns per cycle
  t.span("mxu", "mmul", 1000, 250, "mmul v3");
  const auto x = events_with_ph(t.to_json(), "X");
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0]["name"], "mmul");
  EXPECT_DOUBLE_EQ(x[0]["ts"].get<double>(), 2.0);   // 1000 cycles * 2 ns
  EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 0.5);  // 250 cycles * 2 ns
  EXPECT_EQ(x[0]["args"]["detail"], "mmul v3");
  EXPECT_EQ(x[0]["args"]["cycle"], 1000);
  EXPECT_EQ(x[0]["args"]["cycles"], 250);
}

TEST(Trace, CountersAreNamedAfterTheirTrackWithTheValueInArgs) {
  ChromeTrace t("core", 1e6);  // 1 us per cycle
  t.counter("mxu", "result_fifo", 7, 3);
  t.counter("mxu", "result_fifo", 9, 2.5);
  const auto c = events_with_ph(t.to_json(), "C");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["name"], "mxu");
  EXPECT_DOUBLE_EQ(c[0]["ts"].get<double>(), 7.0);
  EXPECT_EQ(c[0]["args"]["result_fifo"], 3);
  EXPECT_DOUBLE_EQ(c[1]["args"]["result_fifo"].get<double>(), 2.5);
}

TEST(Trace, EventsKeepTheOrderTheyWereRecorded) {
  ChromeTrace t("core", 1e9);
  for (int i = 0; i < 20; ++i) t.span(i % 2 ? "a" : "b", std::to_string(i), 100 - i, 1, "");
  const auto x = events_with_ph(t.to_json(), "X");
  ASSERT_EQ(x.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(x[static_cast<size_t>(i)]["name"], std::to_string(i));
}

TEST(Trace, MaxEventsCapKeepsTheFirstEventsAndCountsTheDropped) {
  ChromeTrace t("core", 1e9, 5);
  for (int i = 0; i < 8; ++i) t.span("s", "op", i, 1, "");
  t.counter("s", "q", 9, 1);
  EXPECT_EQ(t.event_count(), 5u);
  EXPECT_EQ(t.dropped(), 4u);
  const auto j = t.to_json();
  EXPECT_EQ(events_with_ph(j, "X").size(), 5u);
  EXPECT_TRUE(events_with_ph(j, "C").empty());
  EXPECT_EQ(j["otherData"]["dropped_events"], 4);
  EXPECT_EQ(j["otherData"]["events"], 5);
  EXPECT_EQ(events_with_ph(j, "X").back()["args"]["cycle"], 4);
}

TEST(Trace, NamesWithQuotesAndControlCharactersStayValidJson) {
  ChromeTrace t("core \"0\"", 1e9);
  t.span("x\\y", "a\"b", 0, 1, "line1\nline2\t\x01\xff");
  const auto j = t.to_json();
  EXPECT_EQ(j["traceEvents"][0]["args"]["name"], "core \"0\"");
  const auto x = events_with_ph(j, "X");
  EXPECT_EQ(x[0]["name"], "a\"b");
  EXPECT_EQ(x[0]["args"]["detail"], "line1\nline2\t\x01\xc3\xbf");
}

TEST(Trace, WriteProducesTheSameDocumentAsToJson) {
  ChromeTrace t("core", 1e9);
  t.span("mxu", "mmul", 3, 8, "d");
  t.counter("mxu", "fifo", 11, 1);
  const auto path = (std::filesystem::temp_directory_path() /
                     ("tessera_trace_test_" + std::to_string(::getpid()) + ".json"))
                        .string();
  t.write(path);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  EXPECT_EQ(j, t.to_json());
}

TEST(Trace, WriteToAnUnwritablePath_bad) {
  ChromeTrace t("core", 1e9);
  try {
    t.write("/nonexistent-dir/t.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent-dir/t.json: cannot open trace file for writing: No such file or "
                 "directory");
  }
}

TEST(Trace, AFailedWriteNamesTheFileAndTheReason_bad) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  ChromeTrace t("core", 1e9);
  t.span("mxu", "mmul", 3, 8, "d");
  try {
    t.write("/dev/full");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/dev/full: cannot write trace file: No space left on device");
  }
}

TEST(Trace, ATraceOfManyMegabytesIsWrittenWhole) {
  ChromeTrace t("core", 1e9);
  for (int i = 0; i < 40000; ++i) t.span("vector", "vadd", i, 1, std::string(40, 'x'));
  const auto path = (std::filesystem::temp_directory_path() /
                     ("tessera_trace_big_" + std::to_string(::getpid()) + ".json"))
                        .string();
  t.write(path);
  EXPECT_GT(std::filesystem::file_size(path), size_t{4} << 20);  // several write pieces
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  EXPECT_EQ(j, t.to_json());
}

TEST(Trace, NonPositiveClock_bad) {
  try {
    ChromeTrace t("core", 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "trace: clock must be a positive frequency, got 0 Hz");
  }
}

}  // namespace
}  // namespace tessera::report
