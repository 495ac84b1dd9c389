#include "system/system_spec.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "core/spec.h"
#include "system/machine_spec.h"

namespace tessera::system {

const char* barrier_placement_name(BarrierPlacement b) {
  switch (b) {
    case BarrierPlacement::kComputeToExchange:
      return "compute-exchange";
    case BarrierPlacement::kExchangeToCompute:
      return "exchange-compute";
    case BarrierPlacement::kBoth:
      return "both";
  }
  return "?";
}

namespace {

// "a-b,c-d" -> pairs (min, max); an empty string -> none.
std::vector<std::pair<int, int>> parse_links(ConfigReader& r, const std::string& text) {
  std::vector<std::pair<int, int>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int a = 0, b = 0;
    char dash = 0, extra = 0;
    std::stringstream is(item);
    const bool ok = static_cast<bool>(is >> a >> dash >> b) && dash == '-' && !(is >> extra);
    r.require(ok, "system.failed_links", fmt::format("'{}' is not a link 'a-b'", item));
    out.emplace_back(std::min(a, b), std::max(a, b));
  }
  return out;
}

// The system's rule, then the fabric's (fabric::check_fabric_spec, keys under "system.").
template <typename Require>
void check(const SystemSpec& s, Require&& require) {
  require(s.chips == s.chips_per_board * s.boards, "system.chips",
          fmt::format("{} chips but {} boards x {} chips per board = {}", s.chips, s.boards,
                      s.chips_per_board, s.boards * s.chips_per_board));
  fabric::check_fabric_spec(s, [&](bool ok, std::string_view key, const std::string& why) {
    require(ok, fmt::format("system.{}", key), why);
  });
}

}  // namespace

SystemSpec read_system_spec(ConfigReader& r) {
  SystemSpec s;
  s.chips_per_board = static_cast<int>(
      r.get_int("system.chips_per_board", 1, {1, 1 << 16}, "chips", "chips on one board"));
  s.boards = static_cast<int>(
      r.get_int("system.boards", 1, {1, 1 << 16}, "boards", "boards in the system"));
  s.chips =
      static_cast<int>(r.get_int("system.chips", s.chips_per_board * s.boards, {1, 1 << 16},
                                 "chips", "chips in the system (= boards x chips_per_board)"));
  s.cores_per_chip = static_cast<int>(
      r.get_int("system.cores_per_chip", 1, {1, 64}, "cores", "tensor cores per chip"));
  const std::string topo = r.get_string("system.topology", "line", {"line", "ring", "torus2d"},
                                        "inter-chip topology (line: forward and backward links)");
  s.topology = topo == "ring"      ? Topology::kRing
               : topo == "torus2d" ? Topology::kTorus2d
                                   : Topology::kLine;
  s.dims_x = static_cast<int>(
      r.get_int("system.torus.dims_x", 1, {1, 1 << 16}, "chips", "torus2d: chips along x"));
  s.dims_y = static_cast<int>(
      r.get_int("system.torus.dims_y", 1, {1, 1 << 16}, "chips", "torus2d: chips along y"));
  const std::string failed =
      r.get_string("system.failed_links", "", {}, "links out of service, e.g. \"0-1,5-6\"");
  s.failed_links = parse_links(r, failed);

  s.link_gbytes_per_s =
      r.get_float("system.link.bandwidth_gbps", 62, {1e-3, 1e6}, "GB/s", "per link and direction");
  s.link_latency_ns =
      r.get_float("system.link.latency_ns", 500, {0, 1e9}, "ns", "link + router latency per hop");
  const std::string duplex = r.get_string("system.link.duplex", "full", {"half", "full"},
                                          "full: both directions at once; half: one at a time");
  s.duplex = duplex == "half" ? Duplex::kHalf : Duplex::kFull;
  s.loss_rate =
      r.get_float("system.link.loss_rate", 0, {0, 1}, "probability", "packets dropped on the wire");
  s.ack_timeout_ns = r.get_float("system.link.ack_timeout_ns", 2000, {0, 1e12}, "ns",
                                 "retransmit after this without an ack");
  s.packet_payload_bytes = static_cast<int>(
      r.get_int("system.packet.payload_bytes", 1024, {4, 1 << 20}, "bytes", "payload per packet"));
  s.packet_header_bytes = static_cast<int>(r.get_int("system.packet.header_bytes", 32, {0, 4096},
                                                     "bytes", "header per packet on the wire"));
  s.queue_packets =
      static_cast<int>(r.get_int("system.exchange.queue_packets", 128, {1, 1 << 20}, "packets",
                                 "per output link: queued + unacknowledged packets"));
  s.watchdog_us = r.get_float("system.exchange.watchdog_us", 10000, {1e-3, 1e12}, "us",
                              "simulated time without progress -> error");

  s.barrier_latency_ns = r.get_float("system.barrier.latency_ns", 1000, {0, 1e12}, "ns",
                                     "hardware barrier across the sync group");
  const std::string place = r.get_string("system.barrier.placement", "both",
                                         {"compute-exchange", "exchange-compute", "both"},
                                         "where the barrier sits in a superstep (docs/system.md)");
  s.barrier_placement = place == "compute-exchange"   ? BarrierPlacement::kComputeToExchange
                        : place == "exchange-compute" ? BarrierPlacement::kExchangeToCompute
                                                      : BarrierPlacement::kBoth;
  s.onchip_gbytes_per_s = r.get_float("system.onchip.bandwidth_gbps", 256, {1e-3, 1e6}, "GB/s",
                                      "core <-> core of one chip");
  s.onchip_latency_ns =
      r.get_float("system.onchip.latency_ns", 50, {0, 1e9}, "ns", "core <-> core of one chip");
  s.host_gbytes_per_s =
      r.get_float("system.host.bandwidth_gbps", 16, {1e-3, 1e6}, "GB/s", "host link per chip");
  s.host_latency_ns =
      r.get_float("system.host.latency_ns", 1000, {0, 1e12}, "ns", "host link per chip");
  if (!r.is_schema())
    check(s,
          [&r](bool ok, std::string_view key, const std::string& why) { r.require(ok, key, why); });
  return s;
}

void validate_system_spec(const SystemSpec& s) {
  check(s, [](bool ok, std::string_view key, const std::string& why) {
    if (!ok) throw Error(fmt::format("system: key '{}'", key), why);
  });
}

SystemSpec load_system_spec(const std::string& path) {
  return load_machine_spec(path).system;
}

}  // namespace tessera::system
