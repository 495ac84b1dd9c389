// Test support: a configs/<name>.json core with an instruction memory large enough for any
// kernel's straight-line code (the kernels are under test, not the configured program size).
#pragma once

#include <string>

#include "core/spec.h"

namespace tessera::testing {

inline core::CoreSpec kernel_config(const std::string& name) {
  core::CoreSpec s =
      core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/" + name + ".json");
  s.imem_bundles = 1 << 20;
  return s;
}

}  // namespace tessera::testing
