#include "core/host_memory.h"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>
#include <sys/sysinfo.h>

#include "common/error.h"
#include "core/state.h"

namespace tessera::core {

namespace {

// One part of a core, by the key that sizes it; `committed`: taken when the core is built.
struct HostPart {
  const char* key;
  int64_t bytes;
  bool committed;
};

std::array<HostPart, 4> host_parts(const CoreSpec& s) {
  const int64_t vreg_words = int64_t{s.sublanes} * s.lanes;
  const int64_t vregs = s.vector_regs + kShadowRegs, mregs = s.mask_regs + kShadowRegs;
  return {{{"core.vector.vmem_bytes", s.vmem_bytes, false},
           {"core.mxu.acc_blocks",
            int64_t{4} * s.mxu_count * s.mxu_acc_blocks * s.sublanes * s.mxu_cols, true},
           {"core.vector.regs", (4 * vregs + mregs) * vreg_words, true},
           {"core.scalar.smem_words", 4 * s.smem_words, false}}};
}

double gib(double bytes) {
  return bytes / (1 << 30);
}

}  // namespace

int64_t host_memory_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>((static_cast<uint64_t>(info.totalram) + info.totalswap) *
                              info.mem_unit);
}

HostMemory host_memory(const CoreSpec& s, int64_t cores) {
  cores = std::max<int64_t>(cores, 0);
  double committed = 0, reserved = 0, largest = -1;  // doubles: cores x bytes may overflow
  HostMemory m;
  for (const HostPart& p : host_parts(s)) {
    const double bytes = static_cast<double>(p.bytes) * (p.committed ? cores : 1);
    (p.committed ? committed : reserved) += bytes;
    if (bytes > largest) {
      largest = bytes;
      m.key = p.key;
    }
  }
  const double total = committed + reserved;
  m.bytes = total >= 0x1p63 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(total);
  m.why = fmt::format(
      "{} core{} commit {:.3g} GiB when built (register files, MXU accumulators) and reserve "
      "{:.3g} GiB each of vector and scalar memory: {:.3g} GiB, {:.3g} GiB of it for this key; "
      "this host has {:.3g} GiB (memory and swap)",
      cores, cores == 1 ? "" : "s", gib(committed), gib(reserved), gib(total), gib(largest),
      gib(static_cast<double>(host_memory_bytes())));
  return m;
}

void check_host_memory(const CoreSpec& spec, int64_t cores) {
  const HostMemory need = host_memory(spec, cores);
  if (need.bytes > host_memory_bytes()) throw Error(need.key, need.why);
}

}  // namespace tessera::core
