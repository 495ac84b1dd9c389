// parse_json: every failure is a JsonParseError naming the file, line and column.
#include "common/json_parse.h"

#include <gtest/gtest.h>

#include "support/error_of.h"

namespace tessera {
namespace {

using testing::error_of;

TEST(ParseJson, ValidTextParses) {
  EXPECT_EQ(parse_json(R"({"a": [1, 2.5e3]})", "a.json")["a"][1].get<double>(), 2500.0);
  EXPECT_EQ(parse_json("// note\n{\"a\": 1}", "a.json", /*comments=*/true)["a"], 1);
}

TEST(ParseJson, NumberOverflowNamesFileLineAndColumnOfTheNumber_bad) {
  EXPECT_EQ(error_of([] { (void)parse_json(R"({"a": 1e400})", "c.json"); }),
            "c.json:1:7: invalid JSON: number overflow parsing '1e400'");
  EXPECT_EQ(error_of([] { (void)parse_json("[1,\n  -1e999 ]", "g.json"); }),
            "g.json:2:3: invalid JSON: number overflow parsing '-1e999'");
}

TEST(ParseJson, SyntaxErrorNamesWhereTheParserStopped_bad) {
  EXPECT_EQ(error_of([] { (void)parse_json("{\"a\": 1,\n}", "s.json"); }),
            "s.json:2:1: invalid JSON: syntax error while parsing object key - unexpected '}'; "
            "expected string literal");
  EXPECT_EQ(error_of([] { (void)parse_json("", "e.json"); }),
            "e.json:1:1: invalid JSON: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal");
}

TEST(ParseJson, CommentsAreSyntaxErrorsUnlessAccepted_bad) {
  try {
    (void)parse_json("// c\n{}", "x.json");
    ADD_FAILURE();
  } catch (const JsonParseError& e) {
    EXPECT_TRUE(e.syntax());
    EXPECT_EQ(e.where(), "x.json:1:1");
  }
}

TEST(ParseJson, OverflowIsNotASyntaxErrorAndKeepsTheParserPosition) {
  try {
    (void)parse_json(R"({"a": 1e400})", "c.json");
    ADD_FAILURE();
  } catch (const JsonParseError& e) {
    EXPECT_FALSE(e.syntax());
    EXPECT_EQ(e.byte(), 7u);
    EXPECT_EQ(e.reason(), "number overflow parsing '1e400'");
  }
}

}  // namespace
}  // namespace tessera
