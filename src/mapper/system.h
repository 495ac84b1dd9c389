// SystemSpec: the target of a mapping (docs/mapper.md, "The target system"): processors, each a
// width x height mesh of cores, some cores already occupied, and the processor interconnect.
//
// Cores are numbered globally: core = processor * (width * height) + y * width + x; x grows to the
// east, y grows to the south (row 0 is the north edge). Built once from JSON and validated:
// unknown keys, impossible values and systems of more than kMaxCores cores are errors naming the
// key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::mapper {

enum class Interconnect { kAllToAll, kMesh };

// The most cores a system may have (processors x width x height), and so the most nodes a graph
// may have.
inline constexpr int64_t kMaxCores = int64_t{1} << 24;

struct SystemSpec {
  int processors = 1;
  int width = 8;
  int height = 8;
  Interconnect interconnect = Interconnect::kAllToAll;
  int proc_mesh_width = 1;  // processor mesh (interconnect = mesh); width * height == processors
  int proc_mesh_height = 1;
  double link_bandwidth = 1.0;              // on-chip link: traffic units per cycle
  double inter_link_bandwidth = 0.25;       // processor-to-processor link: traffic units per cycle
  double router_latency = 1.0;              // cycles per hop for a packet head
  double inter_latency = 20.0;              // cycles per processor-to-processor hop
  double packet_size = 1.0;                 // traffic units per packet (NoC simulation)
  std::vector<std::vector<bool>> occupied;  // [processor][y * width + x]

  int cores_per_processor() const { return width * height; }
  int total_cores() const { return processors * cores_per_processor(); }
  int processor_of(int core) const { return core / cores_per_processor(); }
  int x_of(int core) const { return core % cores_per_processor() % width; }
  int y_of(int core) const { return core % cores_per_processor() / width; }
  int core_id(int p, int x, int y) const { return p * cores_per_processor() + y * width + x; }
  bool is_occupied(int core) const {
    return occupied[processor_of(core)][core % cores_per_processor()];
  }
  int free_cores(int p) const;
  int total_free_cores() const;
  // Hops between two processors on the interconnect (0 if equal).
  int processor_hops(int a, int b) const;
};

// A system of `processors` free meshes of width x height (processor mesh as square as possible
// when interconnect = mesh).
SystemSpec make_system(int processors, int width, int height,
                       Interconnect ic = Interconnect::kAllToAll);
SystemSpec parse_system_json(const std::string& text, const std::string& origin);
SystemSpec read_system(const std::string& path);
// Throws Error naming the key if the spec is inconsistent.
void validate(const SystemSpec& s, const std::string& origin);

}  // namespace tessera::mapper
