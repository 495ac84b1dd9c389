#include "mapper/system.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/bad_paths.h"
#include "support/error_of.h"

namespace tessera::mapper {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_system_json(text, "s.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(System, ParsesProcessorsMeshOccupiedAndInterconnect) {
  SystemSpec s = parse_system_json(R"({"processors": 4, "mesh": [3, 2], "interconnect": "mesh",
      "processor_mesh": [2, 2], "link_bandwidth": 2, "occupied": [{"processor": 1, "cores": [[0, 0], [2, 1]]}]})",
                                   "s.json");
  EXPECT_EQ(s.total_cores(), 24);
  EXPECT_EQ(s.free_cores(1), 4);
  EXPECT_TRUE(s.is_occupied(s.core_id(1, 2, 1)));
  EXPECT_EQ(s.processor_hops(0, 3), 2);
  EXPECT_DOUBLE_EQ(s.link_bandwidth, 2.0);
}

TEST(System, BadConfigsNameTheKey_bad) {
  EXPECT_EQ(error_of(R"({"mesh": [4, 4], "bandwidth": 1})"), "s.json: bandwidth: unknown key");
  EXPECT_EQ(error_of(R"({"processors": 2})"), "s.json: mesh: missing key (give [width, height])");
  EXPECT_EQ(error_of(R"({"mesh": [4, 0]})"), "s.json: mesh: values must be in [1, 4096]");
  EXPECT_EQ(error_of(R"({"mesh": [4, 4], "processors": 0})"),
            "s.json: processors: 0 is out of range [1, 4096]");
  EXPECT_EQ(error_of(R"({"mesh": [4, 4], "interconnect": "ring"})"),
            "s.json: interconnect: must be \"all-to-all\" or \"mesh\"");
  EXPECT_EQ(
      error_of(
          R"({"mesh": [4, 4], "processors": 3, "interconnect": "mesh", "processor_mesh": [2, 2]})"),
      "s.json: processor_mesh: 2x2 does not hold 3 processors");
  EXPECT_EQ(error_of(R"({"mesh": [2, 2], "occupied": [{"processor": 0, "cores": [[2, 0]]}]})"),
            "s.json: occupied[0].cores[0]: core (2, 0) is outside the 2x2 mesh");
  EXPECT_EQ(error_of(R"({"mesh": [2, 2], "occupied": [{"processor": 1, "cores": []}]})"),
            "s.json: occupied[0].processor: 1 is out of range [0, 1)");
  EXPECT_EQ(error_of(R"({"mesh": [2, 2], "link_bandwidth": -1})"),
            "s.json: link_bandwidth: -1 must be > 0 and finite");
}

TEST(System, MoreCoresThanASystemMayHaveAreRefusedBeforeAllocating_bad) {
  EXPECT_EQ(error_of(R"({"processors": 4096, "mesh": [4096, 4096]})"),
            "s.json: mesh: 4096 processors of 4096x4096 cores are 68719476736 cores, more than the "
            "16777216 a system may have (processors x mesh width x mesh height)");
  EXPECT_EQ(error_of(R"({"processors": 1, "mesh": [4096, 4096]})"), "no error");
}

TEST(System, IntegersBeyondIntAreOutOfRangeNotWrapped_bad) {
  EXPECT_EQ(error_of(R"({"mesh": [4294967298, 2]})"), "s.json: mesh: values must be in [1, 4096]");
  EXPECT_EQ(error_of(R"({"mesh": [2, 2], "occupied": [{"processor": 4294967296, "cores": []}]})"),
            "s.json: occupied[0].processor: 4294967296 is out of range [0, 1)");
}

TEST(System, NumberOverflowNamesThePlace_bad) {
  EXPECT_EQ(error_of(R"({"mesh": [2, 2], "link_bandwidth": 1e400})"),
            "s.json:1:36: invalid JSON: number overflow parsing '1e400'");
}

TEST(System, FilesThatAreDirectoriesOrEmptyAreNamed_bad) {
  const testing::BadPaths bad = testing::bad_paths("mapper-system");
  auto read_error = [](const std::string& path) {
    return testing::error_of([&] { read_system(path); });
  };
  EXPECT_EQ(read_error(bad.directory), bad.directory + ": is a directory, not a file");
  EXPECT_EQ(read_error(bad.empty), bad.empty + ": is empty");
  EXPECT_EQ(read_error(bad.missing), bad.missing + ": cannot open system file");
}

}  // namespace
}  // namespace tessera::mapper
