#include "report/stats.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/error.h"

namespace tessera::report {
namespace {

StatGroup sample() {
  StatGroup root;
  root.set_int("cycles", 1234, "cycles", "simulated cycles");
  root.set("utilisation", 0.75);
  auto& mxu = root.group("mxu");
  mxu.set_int("busy_cycles", 1000, "cycles");
  mxu.group("fifo").set_int("max_occupancy", 3);
  root.set_int("bundles", 99);
  return root;
}

TEST(Stats, JsonKeepsDeclarationOrderAndNesting) {
  const auto j = sample().to_json();
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"cycles", "utilisation", "mxu", "bundles"}));
  EXPECT_EQ(
      j.dump(),
      R"({"cycles":1234,"utilisation":0.75,"mxu":{"busy_cycles":1000,"fifo":{"max_occupancy":3}},"bundles":99})");
}

TEST(Stats, IntegerCountersAreJsonIntegersAndFloatsAreFloats) {
  const auto j = sample().to_json();
  EXPECT_TRUE(j["cycles"].is_number_integer());
  EXPECT_TRUE(j["utilisation"].is_number_float());
}

TEST(Stats, DottedLookupFindsNestedCounters) {
  const StatGroup s = sample();
  EXPECT_EQ(s.get("cycles"), 1234);
  EXPECT_EQ(s.get("mxu.busy_cycles"), 1000);
  EXPECT_EQ(s.get("mxu.fifo.max_occupancy"), 3);
  EXPECT_TRUE(s.has("mxu.fifo.max_occupancy"));
  EXPECT_FALSE(s.has("mxu"));  // a group is not a counter
  EXPECT_FALSE(s.has("mxu.fifo.nothing"));
  EXPECT_FALSE(s.has("cycles.sub"));
}

TEST(Stats, MissingCounter_bad) {
  const StatGroup s = sample();
  try {
    s.get("mxu.idle");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stats: no counter 'mxu.idle'");
  }
  EXPECT_THROW(s.get("mxu"), Error);
  EXPECT_THROW(s.get("cycles.x"), Error);
}

TEST(Stats, SetReplacesInPlaceAndGroupReturnsTheSameGroup) {
  StatGroup s = sample();
  s.set_int("cycles", 5);
  s.group("mxu").set_int("busy_cycles", 7);
  EXPECT_EQ(s.get("cycles"), 5);
  EXPECT_EQ(s.get("mxu.busy_cycles"), 7);
  EXPECT_EQ(s.to_json().begin().key(), "cycles");
  EXPECT_EQ(s.to_json().size(), 4u);
}

TEST(Stats, NameKindConflicts_bad) {
  StatGroup s = sample();
  try {
    s.group("cycles");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stats: 'cycles' is a counter, not a group");
  }
  try {
    s.set("mxu", 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stats: 'mxu' is a group, not a counter");
  }
  try {
    s.set("a.b", 1);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stats: invalid counter or group name 'a.b' (non-empty, no dots)");
  }
}

TEST(Stats, NonFiniteValuesBecomeJsonNull) {
  StatGroup s;
  s.set("ratio", std::numeric_limits<double>::quiet_NaN());
  s.set("inf", std::numeric_limits<double>::infinity());
  const auto j = s.to_json();
  EXPECT_TRUE(j["ratio"].is_null());
  EXPECT_TRUE(j["inf"].is_null());
  EXPECT_TRUE(std::isnan(s.get("ratio")));
}

TEST(Stats, JsonConvertsToUnorderedJsonWithTheSameContent) {
  const nlohmann::json j = sample().to_json();
  EXPECT_EQ(j["mxu"]["fifo"]["max_occupancy"], 3);
  EXPECT_EQ(j.size(), 4u);
}

TEST(Stats, TextListsCountersWithUnitsAndIndentsGroups) {
  const std::string text = sample().to_text();
  EXPECT_EQ(text,
            "cycles       1234 cycles\n"
            "utilisation  0.75\n"
            "mxu:\n"
            "  busy_cycles  1000 cycles\n"
            "  fifo:\n"
            "    max_occupancy  3\n"
            "bundles      99\n");
}

}  // namespace
}  // namespace tessera::report
