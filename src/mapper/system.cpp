#include "mapper/system.h"

#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "common/json_parse.h"

namespace tessera::mapper {
namespace {

using nlohmann::json;

int get_int(const json& doc, const char* key, int lo, int hi, const std::string& origin) {
  const json& v = doc[key];
  std::string where = origin + ": " + key;
  if (!v.is_number_integer()) throw Error(where, "must be an integer");
  long long x = v.get<long long>();
  if (x < lo || x > hi) throw Error(where, fmt::format("{} is out of range [{}, {}]", x, lo, hi));
  return static_cast<int>(x);
}

double get_positive(const json& doc, const char* key, const std::string& origin) {
  const json& v = doc[key];
  std::string where = origin + ": " + key;
  if (!v.is_number()) throw Error(where, "must be a number");
  double x = v.get<double>();
  if (!(x > 0.0) || !std::isfinite(x))
    throw Error(where, fmt::format("{} must be > 0 and finite", x));
  return x;
}

std::pair<int, int> get_pair(const json& v, const std::string& where, int lo, int hi) {
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
    throw Error(where, "must be [width, height] (two integers)");
  const int64_t a = v[0].get<int64_t>(), b = v[1].get<int64_t>();
  if (a < lo || a > hi || b < lo || b > hi)
    throw Error(where, fmt::format("values must be in [{}, {}]", lo, hi));
  return {static_cast<int>(a), static_cast<int>(b)};
}

void parse_occupied(SystemSpec& s, const json& occ, const std::string& origin) {
  if (!occ.is_array()) throw Error(origin + ": occupied", "must be an array of {processor, cores}");
  for (size_t i = 0; i < occ.size(); ++i) {
    std::string where = fmt::format("{}: occupied[{}]", origin, i);
    const json& o = occ[i];
    if (!o.is_object() || !o.contains("processor") || !o.contains("cores"))
      throw Error(where, "must be {\"processor\": p, \"cores\": [[x, y], ...]}");
    for (auto it = o.begin(); it != o.end(); ++it)
      if (it.key() != "processor" && it.key() != "cores")
        throw Error(where, fmt::format("unknown key '{}'", it.key()));
    if (!o["processor"].is_number_integer())
      throw Error(where + ".processor", "must be an integer");
    const int64_t p = o["processor"].get<int64_t>();
    if (p < 0 || p >= s.processors)
      throw Error(where + ".processor", fmt::format("{} is out of range [0, {})", p, s.processors));
    if (!o["cores"].is_array()) throw Error(where + ".cores", "must be an array of [x, y]");
    for (size_t j = 0; j < o["cores"].size(); ++j) {
      std::string cw = fmt::format("{}.cores[{}]", where, j);
      auto [x, y] = get_pair(o["cores"][j], cw, 0, 1 << 20);
      if (x >= s.width || y >= s.height)
        throw Error(
            cw, fmt::format("core ({}, {}) is outside the {}x{} mesh", x, y, s.width, s.height));
      s.occupied[static_cast<size_t>(p)][y * s.width + x] = true;
    }
  }
}

// Refuses systems whose cores cannot all be held (core ids are ints; the occupancy map is built
// for every core).
void check_core_count(int processors, int width, int height, const std::string& origin) {
  const int64_t cores = int64_t{processors} * width * height;
  if (cores > kMaxCores)
    throw Error(origin + ": mesh",
                fmt::format("{} processors of {}x{} cores are {} cores, more than the {} a system "
                            "may have (processors x mesh width x mesh height)",
                            processors, width, height, cores, kMaxCores));
}

}  // namespace

int SystemSpec::free_cores(int p) const {
  int n = 0;
  for (bool b : occupied[p]) n += b ? 0 : 1;
  return n;
}

int SystemSpec::total_free_cores() const {
  int n = 0;
  for (int p = 0; p < processors; ++p) n += free_cores(p);
  return n;
}

int SystemSpec::processor_hops(int a, int b) const {
  if (a == b) return 0;
  if (interconnect == Interconnect::kAllToAll) return 1;
  return std::abs(a % proc_mesh_width - b % proc_mesh_width) +
         std::abs(a / proc_mesh_width - b / proc_mesh_width);
}

SystemSpec make_system(int processors, int width, int height, Interconnect ic) {
  SystemSpec s;
  s.processors = processors;
  s.width = width;
  s.height = height;
  s.interconnect = ic;
  int pw = 1;
  while (pw * pw < processors) ++pw;
  while (processors % pw != 0) ++pw;
  s.proc_mesh_width = pw;
  s.proc_mesh_height = processors / pw;
  check_core_count(processors, width, height, "system");
  s.occupied.assign(processors, std::vector<bool>(width * height, false));
  validate(s, "system");
  return s;
}

void validate(const SystemSpec& s, const std::string& origin) {
  if (s.processors < 1) throw Error(origin + ": processors", "must be >= 1");
  if (s.width < 1 || s.height < 1) throw Error(origin + ": mesh", "width and height must be >= 1");
  if (s.interconnect == Interconnect::kMesh &&
      s.proc_mesh_width * s.proc_mesh_height != s.processors)
    throw Error(origin + ": processor_mesh",
                fmt::format("{}x{} does not hold {} processors", s.proc_mesh_width,
                            s.proc_mesh_height, s.processors));
  if (static_cast<int>(s.occupied.size()) != s.processors)
    throw Error(origin + ": occupied", "size mismatch");
}

SystemSpec parse_system_json(const std::string& text, const std::string& origin) {
  const json doc = parse_json(text, origin);
  if (!doc.is_object()) throw Error(origin, "top level must be an object");
  static const char* kKeys[] = {"processors",           "mesh",           "occupied",
                                "interconnect",         "processor_mesh", "link_bandwidth",
                                "inter_link_bandwidth", "router_latency", "inter_latency",
                                "packet_size",          "comment"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    bool ok = false;
    for (const char* k : kKeys) ok = ok || it.key() == k;
    if (!ok) throw Error(origin + ": " + it.key(), "unknown key");
  }
  SystemSpec s;
  if (doc.contains("processors")) s.processors = get_int(doc, "processors", 1, 4096, origin);
  if (!doc.contains("mesh")) throw Error(origin + ": mesh", "missing key (give [width, height])");
  std::tie(s.width, s.height) = get_pair(doc["mesh"], origin + ": mesh", 1, 4096);
  check_core_count(s.processors, s.width, s.height, origin);
  s = make_system(s.processors, s.width, s.height, Interconnect::kAllToAll);
  if (doc.contains("interconnect")) {
    const json& v = doc["interconnect"];
    std::string ic = v.is_string() ? v.get<std::string>() : "";
    if (ic == "all-to-all")
      s.interconnect = Interconnect::kAllToAll;
    else if (ic == "mesh")
      s.interconnect = Interconnect::kMesh;
    else
      throw Error(origin + ": interconnect", "must be \"all-to-all\" or \"mesh\"");
  }
  if (doc.contains("processor_mesh"))
    std::tie(s.proc_mesh_width, s.proc_mesh_height) =
        get_pair(doc["processor_mesh"], origin + ": processor_mesh", 1, 4096);
  if (doc.contains("link_bandwidth"))
    s.link_bandwidth = get_positive(doc, "link_bandwidth", origin);
  if (doc.contains("inter_link_bandwidth"))
    s.inter_link_bandwidth = get_positive(doc, "inter_link_bandwidth", origin);
  if (doc.contains("router_latency"))
    s.router_latency = get_positive(doc, "router_latency", origin);
  if (doc.contains("inter_latency")) s.inter_latency = get_positive(doc, "inter_latency", origin);
  if (doc.contains("packet_size")) s.packet_size = get_positive(doc, "packet_size", origin);
  if (doc.contains("occupied")) parse_occupied(s, doc["occupied"], origin);
  validate(s, origin);
  return s;
}

SystemSpec read_system(const std::string& path) {
  return parse_system_json(read_file(path, "system file"), path);
}

}  // namespace tessera::mapper
