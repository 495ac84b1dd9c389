// The host memory simulated cores take, so a config whose cores cannot fit the host is refused by
// name before anything is allocated (instead of std::bad_alloc or the kernel's OOM killer).
//
// Per core, two kinds of parts:
//   committed when the core is built: the register files and the MXU accumulators;
//   reserved when it is built and committed only as programs write them: vector and scalar memory
//   (calloc'ed). A reservation fails only when it alone exceeds the host, so of these one core's
//   count, however many cores there are.
// HBM is allocated page by page as it is written and is not counted. The host has its physical
// memory plus swap.
#pragma once

#include <cstdint>
#include <string>

#include "core/spec.h"

namespace tessera::core {

struct HostMemory {
  int64_t bytes = 0;  // cores x committed + one core's reservations (saturating at INT64_MAX)
  std::string key;    // the config key of the largest part (e.g. "core.mxu.acc_blocks")
  std::string why;    // what is needed against what the host has
};

HostMemory host_memory(const CoreSpec& spec, int64_t cores);

// The host's physical memory plus swap, in bytes (INT64_MAX when the kernel does not say).
int64_t host_memory_bytes();

// Error(key, why) when `cores` cores of `spec` take more than host_memory_bytes().
void check_host_memory(const CoreSpec& spec, int64_t cores);

}  // namespace tessera::core
