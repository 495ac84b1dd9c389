// The host memory a simulated core takes, so a config whose cores cannot fit the host is refused
// by name before anything is allocated (instead of std::bad_alloc or the kernel's OOM killer).
//
// Counted per core: the register files and MXU accumulators (committed when the core is built),
// vector and scalar memory (calloc'ed: reserved when the core is built, committed as written).
// HBM is allocated page by page as it is written and is not counted.
#pragma once

#include <cstdint>
#include <string>

#include "core/spec.h"

namespace tessera::core {

struct HostMemory {
  int64_t bytes = 0;
  std::string key;  // the config key of the largest part (e.g. "core.vector.vmem_bytes")
  std::string why;  // "N cores of X GiB each (Y GiB of it for this key) need Z GiB ...; this host
                    // has H GiB (memory and swap)"
};

// What `cores` cores of `spec` take (saturating at INT64_MAX).
HostMemory host_memory(const CoreSpec& spec, int64_t cores);

// The host's physical memory plus swap, in bytes (INT64_MAX when the kernel does not say).
int64_t host_memory_bytes();

// Error(key, why) when `cores` cores of `spec` take more than host_memory_bytes().
void check_host_memory(const CoreSpec& spec, int64_t cores);

}  // namespace tessera::core
