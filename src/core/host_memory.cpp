#include "core/host_memory.h"

#include <array>
#include <limits>

#include <fmt/format.h>
#include <sys/sysinfo.h>

#include "common/error.h"
#include "core/state.h"

namespace tessera::core {

namespace {

// What one core takes of the host's memory, by the key that sizes each part.
struct HostPart {
  const char* key;
  int64_t bytes;
};

std::array<HostPart, 4> host_parts(const CoreSpec& s) {
  const int64_t vreg_words = int64_t{s.sublanes} * s.lanes;
  const int64_t vregs = s.vector_regs + kShadowRegs, mregs = s.mask_regs + kShadowRegs;
  return {{{"core.vector.vmem_bytes", s.vmem_bytes},
           {"core.mxu.acc_blocks", int64_t{4} * s.mxu_acc_blocks * s.sublanes * s.mxu_cols},
           {"core.vector.regs", (4 * vregs + mregs) * vreg_words},
           {"core.scalar.smem_words", 4 * s.smem_words}}};
}

}  // namespace

int64_t host_memory_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>((static_cast<uint64_t>(info.totalram) + info.totalswap) *
                              info.mem_unit);
}

HostMemory host_memory(const CoreSpec& s, int64_t cores) {
  HostMemory m;
  HostPart largest{"", -1};
  int64_t per_core = 0;
  for (const HostPart& p : host_parts(s)) {
    per_core += p.bytes;
    if (p.bytes > largest.bytes) largest = p;
  }
  m.bytes = cores < 1 ? 0
            : per_core > std::numeric_limits<int64_t>::max() / cores
                ? std::numeric_limits<int64_t>::max()
                : per_core * cores;
  m.key = largest.key;
  const int64_t host = host_memory_bytes();
  m.why = fmt::format(
      "{} core{} of {:.3g} GiB each ({:.3g} GiB of it for this key) need {:.3g} GiB of host "
      "memory; this host has {:.3g} GiB (memory and swap)",
      cores, cores == 1 ? "" : "s", static_cast<double>(per_core) / (1 << 30),
      static_cast<double>(largest.bytes) / (1 << 30),
      static_cast<double>(per_core) * static_cast<double>(cores) / (1 << 30),
      static_cast<double>(host) / (1 << 30));
  return m;
}

void check_host_memory(const CoreSpec& spec, int64_t cores) {
  const HostMemory need = host_memory(spec, cores);
  if (need.bytes > host_memory_bytes()) throw Error(need.key, need.why);
}

}  // namespace tessera::core
