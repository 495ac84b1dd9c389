#include "system/collective_grid.h"

namespace tessera::system {

std::vector<int> collective_grid(const SystemSpec& spec) {
  if (spec.topology == Topology::kTorus2d) return {spec.cores_per_chip, spec.dims_x, spec.dims_y};
  return {spec.cores_per_chip, spec.chips};
}

}  // namespace tessera::system
