// A core small enough that tests build dozens of processors quickly (the collectives touch only
// vector memory): 64 KiB vmem, 1 MiB HBM, 8 accumulator blocks.
#pragma once

#include "core/spec.h"

namespace tessera::system {

inline core::CoreSpec small_spec() {
  core::CoreSpec s;
  s.vmem_bytes = 64 << 10;
  s.hbm_bytes = 1 << 20;
  s.mxu_acc_blocks = 8;
  return s;
}

}  // namespace tessera::system
