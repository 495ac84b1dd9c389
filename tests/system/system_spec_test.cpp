// system.* config: defaults (one chip, one core), the shipped board and pod configs, and bad
// configs with their exact messages.
#include "system/system_spec.h"

#include <string>

#include <gtest/gtest.h>

#include "support/error_of.h"

namespace tessera::system {
namespace {

SystemSpec read(const std::string& text) {
  ConfigReader r = ConfigReader::from_string(text, "t.json");
  SystemSpec s = read_system_spec(r);
  r.finish();
  return s;
}

std::string error_reading(const std::string& text) {
  return testing::error_of([&] { read(text); });
}

TEST(SystemSpec, DefaultIsOneChipWithOneCore) {
  const SystemSpec s = read("{}");
  EXPECT_EQ(s.chips, 1);
  EXPECT_EQ(s.cores_per_chip, 1);
  EXPECT_EQ(s.processors(), 1);
}

TEST(SystemSpec, ShippedBoardIsARingOfFourChipsWithTwoCores) {
  const SystemSpec s = load_system_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/board4.json");
  EXPECT_EQ(s.chips, 4);
  EXPECT_EQ(s.cores_per_chip, 2);
  EXPECT_EQ(s.topology, Topology::kRing);
  EXPECT_TRUE(s.linked(3, 0));
  EXPECT_EQ(s.link_gbytes_per_s, 62);
  EXPECT_EQ(s.duplex, Duplex::kFull);
}

TEST(SystemSpec, ShippedPodIsAFourByFourTorus) {
  const SystemSpec s =
      load_system_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/pod-torus.json");
  EXPECT_EQ(s.chips, 16);
  EXPECT_EQ(s.boards, 4);
  EXPECT_EQ(s.topology, Topology::kTorus2d);
  EXPECT_EQ(s.dims_x * s.dims_y, 16);
  EXPECT_TRUE(s.linked(0, 3));   // x wrap
  EXPECT_TRUE(s.linked(0, 12));  // y wrap
  EXPECT_FALSE(s.linked(0, 5));
}

TEST(SystemSpec, FailedLinksAreParsed) {
  const SystemSpec s = read(
      R"({"system": {"chips": 4, "chips_per_board": 4, "topology": "ring", "failed_links": "1-0,2-3"}})");
  EXPECT_FALSE(s.linked(0, 1));
  EXPECT_FALSE(s.linked(3, 2));
  EXPECT_TRUE(s.linked(1, 2));
}

TEST(SystemSpec, TimeConversionsRoundToPicoseconds) {
  EXPECT_EQ(ns_to_ps(1.5), 1500);
  EXPECT_EQ(transfer_ps(1056, 100), 10560);
  EXPECT_EQ(transfer_ps(3, 62), 48);  // 48.39 ps
}

TEST(SystemSpec, TorusDimsMustMultiplyToChips_bad) {
  EXPECT_EQ(
      error_reading(
          R"({"system": {"chips": 16, "chips_per_board": 4, "boards": 4, "topology": "torus2d",
                                         "torus": {"dims_x": 4, "dims_y": 3}}})"),
      "t.json: key 'system.torus.dims_x': torus2d dims 4 x 3 = 12 but the system has 16 chips");
}

TEST(SystemSpec, ChipsMustEqualBoardsTimesChipsPerBoard_bad) {
  EXPECT_EQ(error_reading(R"({"system": {"chips": 6, "chips_per_board": 4, "boards": 1}})"),
            "t.json: key 'system.chips': 6 chips but 1 boards x 4 chips per board = 4");
}

TEST(SystemSpec, AckTimeoutMustExceedTheRoundTrip_bad) {
  EXPECT_EQ(error_reading(R"({"system": {"link": {"latency_ns": 800, "ack_timeout_ns": 1500}}})"),
            "t.json: key 'system.link.ack_timeout_ns': the ack timeout (1500 ns) must exceed the "
            "round trip 2 x "
            "link latency (1600 ns)");
}

TEST(SystemSpec, PayloadMustBeWholeWords_bad) {
  EXPECT_EQ(
      error_reading(R"({"system": {"packet": {"payload_bytes": 1022}}})"),
      "t.json: key 'system.packet.payload_bytes': 1022 is not a whole number of 32-bit words");
}

TEST(SystemSpec, RingOfTwoIsALine_bad) {
  EXPECT_EQ(
      error_reading(R"({"system": {"chips_per_board": 2, "topology": "ring"}})"),
      "t.json: key 'system.topology': a ring of 2 chips is a line (one link); use topology line");
}

TEST(SystemSpec, FailedLinkMustExist_bad) {
  EXPECT_EQ(error_reading(
                R"({"system": {"chips_per_board": 4, "topology": "line", "failed_links": "0-2"}})"),
            "t.json: key 'system.failed_links': 0-2 is not a link of this line topology");
  EXPECT_EQ(error_reading(R"({"system": {"chips_per_board": 4, "failed_links": "0:1"}})"),
            "t.json: key 'system.failed_links': '0:1' is not a link 'a-b'");
}

TEST(SystemSpec, UnknownTopologyAndKeys_bad) {
  EXPECT_NE(error_reading(R"({"system": {"topology": "mesh"}})").find("key 'system.topology'"),
            std::string::npos);
  EXPECT_NE(error_reading(R"({"system": {"link": {"bandwith_gbps": 5}}})")
                .find("system.link.bandwith_gbps"),
            std::string::npos);
}

TEST(SystemSpec, SpecBuiltInCodeIsValidatedWithTheSameChecks_bad) {
  SystemSpec s;
  s.chips = 8;
  s.chips_per_board = 4;
  s.boards = 2;
  s.topology = Topology::kTorus2d;
  s.dims_x = 3;
  s.dims_y = 3;
  EXPECT_EQ(testing::error_of([&] { validate_system_spec(s); }),
            "system: key 'system.torus.dims_x': torus2d dims 3 x 3 = 9 but the system has 8 chips");
}

}  // namespace
}  // namespace tessera::system
