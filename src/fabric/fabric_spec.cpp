#include "fabric/fabric_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::fabric {

const char* topology_name(Topology t) {
  switch (t) {
    case Topology::kLine:
      return "line";
    case Topology::kRing:
      return "ring";
    case Topology::kTorus2d:
      return "torus2d";
  }
  return "?";
}

const char* duplex_name(Duplex d) {
  return d == Duplex::kHalf ? "half" : "full";
}

bool FabricSpec::adjacent(int a, int b) const {
  if (a == b || a < 0 || b < 0 || a >= chips || b >= chips) return false;
  switch (topology) {
    case Topology::kLine:
      return std::abs(a - b) == 1;
    case Topology::kRing:
      return std::abs(a - b) == 1 || std::abs(a - b) == chips - 1;
    case Topology::kTorus2d: {
      const int ax = a % dims_x, ay = a / dims_x, bx = b % dims_x, by = b / dims_x;
      const auto next_to = [](int u, int v, int n) { return (u + 1) % n == v || (v + 1) % n == u; };
      return (ay == by && next_to(ax, bx, dims_x)) || (ax == bx && next_to(ay, by, dims_y));
    }
  }
  return false;
}

bool FabricSpec::linked(int a, int b) const {
  if (!adjacent(a, b)) return false;
  const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
  return std::find(failed_links.begin(), failed_links.end(), key) == failed_links.end();
}

void check_fabric_spec(const FabricSpec& s, const SpecRequire& require) {
  if (s.topology == Topology::kTorus2d)
    require(s.dims_x * s.dims_y == s.chips, "torus.dims_x",
            fmt::format("torus2d dims {} x {} = {} but the system has {} chips", s.dims_x, s.dims_y,
                        s.dims_x * s.dims_y, s.chips));
  if (s.topology == Topology::kRing)
    require(s.chips != 2, "topology", "a ring of 2 chips is a line (one link); use topology line");
  require(s.packet_payload_bytes % 4 == 0, "packet.payload_bytes",
          fmt::format("{} is not a whole number of 32-bit words", s.packet_payload_bytes));
  require(s.ack_timeout_ns > 2 * s.link_latency_ns, "link.ack_timeout_ns",
          fmt::format("the ack timeout ({} ns) must exceed the round trip 2 x link latency ({} ns)",
                      s.ack_timeout_ns, 2 * s.link_latency_ns));
  for (const auto& [a, b] : s.failed_links)
    require(
        s.adjacent(a, b), "failed_links",
        fmt::format("{}-{} is not a link of this {} topology", a, b, topology_name(s.topology)));
}

void validate_fabric_spec(const FabricSpec& spec) {
  check_fabric_spec(spec, [](bool ok, std::string_view key, const std::string& why) {
    if (!ok) throw Error(fmt::format("fabric spec: key '{}'", key), why);
  });
}

Picos ns_to_ps(double ns) {
  return std::llround(ns * 1000.0);
}

Picos transfer_ps(int64_t bytes, double gbytes_per_s) {
  return std::llround(static_cast<double>(bytes) * 1000.0 / gbytes_per_s);
}

}  // namespace tessera::fabric
