#include "core/spec.h"

#include <array>
#include <bit>
#include <iterator>
#include <limits>

#include <fmt/format.h>
#include <sys/sysinfo.h>

#include "core/state.h"
#include "core/units.h"

namespace tessera::core {

namespace {

using isa::LatencyClass;

struct LatencyDefault {
  LatencyClass cls;
  const char* key;
  int cycles;
  const char* what;
};

// Defaults: VLIW pipelines of the published chip class (a few cycles for ALUs, tens for the
// cross-lane units); every one is configurable.
constexpr LatencyDefault kLatencyDefaults[] = {
    {LatencyClass::Scalar, "scalar", 1, "scalar ALU op"},
    {LatencyClass::ScalarMul, "scalar_mul", 3, "scalar multiply"},
    {LatencyClass::ScalarMem, "scalar_mem", 2, "scalar memory load"},
    {LatencyClass::Branch, "branch", 1,
     "taken branch (cycles lost: the next fetch waits this long)"},
    {LatencyClass::VecAdd, "vector_add", 2, "vector add/logic/compare/convert"},
    {LatencyClass::VecMul, "vector_mul", 4, "vector multiply and fma"},
    {LatencyClass::VecLoad, "vector_load", 3, "vector load from vector memory"},
    {LatencyClass::VecStore, "vector_store", 1, "vector store (occupancy)"},
    {LatencyClass::Matrix, "matrix_pop", 1, "mpop to vreg"},
    {LatencyClass::Transpose, "transpose", 8, "transpose unit pipeline"},
    {LatencyClass::Reduce, "reduce", 12, "reduce/permute unit pipeline"},
    {LatencyClass::Eup, "eup", 3, "extended unary pipeline (exp, log, rcp, ...)"},
    {LatencyClass::Rng, "rng", 2, "random number generator"},
    {LatencyClass::Dma, "dma_issue", 1, "dma instruction issue"},
    {LatencyClass::Sync, "sync", 1, "sync flag wait/signal"},
};

static_assert(std::size(kLatencyDefaults) == isa::kNumLatencyClasses - 1,
              "a default for every latency class but None (isa/latency_classes.def)");

bool is_pow2(int64_t x) {
  return x > 0 && std::has_single_bit(static_cast<uint64_t>(x));
}

}  // namespace

CoreSpec read_core_spec(ConfigReader& r) {
  CoreSpec s;
  s.name = r.get_string("core.name", "default", {}, "a name for this machine, shown in reports");
  s.clock_hz = r.get_float("core.clock_hz", 700e6, {1e6, 1e11}, "Hz", "core clock");

  s.scalar_regs = static_cast<int>(
      r.get_int("core.scalar.regs", 32, {4, 64}, "registers", "scalar registers (32-bit)"));
  s.smem_words =
      r.get_int("core.scalar.smem_words", 4096, {16, 1 << 24}, "words", "scalar memory size");
  s.imem_bundles = r.get_int("core.scalar.imem_bundles", 65536, {16, 1 << 24}, "bundles",
                             "instruction memory size");

  s.sublanes = static_cast<int>(
      r.get_int("core.vector.sublanes", 8, {1, 64}, "sublanes", "rows of the vector unit"));
  s.lanes = static_cast<int>(
      r.get_int("core.vector.lanes", 128, {1, 4096}, "lanes", "columns of the vector unit"));
  s.vector_regs = static_cast<int>(r.get_int("core.vector.regs", 32, {4, 64}, "registers",
                                             "vector registers (sublanes x lanes x 32 bit)"));
  s.mask_regs = static_cast<int>(
      r.get_int("core.vector.mask_regs", 8, {1, 64}, "registers", "mask registers"));
  s.vmem_bytes = r.get_int("core.vector.vmem_bytes", 16ll << 20, {1024, kMaxVmemBytes}, "bytes",
                           "vector memory per core (at most 8 GiB: a word address is a 32-bit "
                           "immediate)");

  // The registered units' sections (MXU, transpose, reduce/permute, EUP, RNG), in table order.
  for (const UnitRegistration& u : core_units())
    if (u.read_spec != nullptr) u.read_spec(r, s);

  for (const auto& d : kLatencyDefaults)
    s.latency[static_cast<int>(d.cls)] = static_cast<int>(
        r.get_int(std::string("core.latency.") + d.key, d.cycles, {1, 100000}, "cycles", d.what));

  s.hbm_bytes = r.get_int("core.hbm.bytes", 8ll << 30, {4096, 1ll << 40}, "bytes",
                          "HBM capacity of this core");
  s.hbm_bytes_per_cycle = r.get_float("core.hbm.bytes_per_cycle", 428, {0.001, 1e6}, "bytes/cycle",
                                      "HBM bandwidth of this core");
  s.dma_latency = static_cast<int>(
      r.get_int("core.dma.latency", 500, {0, 1000000}, "cycles", "DMA issue to first byte"));
  s.dma_queue = static_cast<int>(
      r.get_int("core.dma.queue", 16, {1, 4096}, "requests", "outstanding DMA requests"));
  s.sync_flags = static_cast<int>(r.get_int("core.sync.flags", 32, {1, 64}, "flags", "sync flags"));
  s.hbm_encoding = read_hbm_encoding_spec(r);

  auto& e = s.energy;
#define X(en, part, field, def, max, unit, what) \
  e.field = r.get_float("core.energy." #field, def, {0, max}, unit, what);
#include "core/energy_parts.def"
#undef X
  e.term_source = r.get_string(
      "core.mxu.term.energy_source", "unspecified", {},
      "where core.mxu.term.term_pj and step_pj come from (energy_j with term-serial PEs)");

  s.adam = read_adam_unit_spec(r);

  if (!r.is_schema()) {
    r.require(
        s.lanes % s.sublanes == 0 || s.lanes < s.sublanes, "core.vector.lanes",
        "lanes must be a multiple of sublanes (the transpose unit moves lanes/sublanes slices)");
    r.require(is_pow2(s.lanes), "core.vector.lanes",
              "lanes must be a power of two (reduction tree)");
    r.require(s.mxu_rows % s.sublanes == 0, "core.mxu.rows",
              "MXU rows must be a multiple of sublanes (mlw shifts in one vreg of rows at a time)");
    r.require(s.mxu_cols <= s.lanes, "core.mxu.cols", "MXU columns cannot exceed the vector lanes");
    r.require(s.mxu_rows <= s.lanes, "core.mxu.rows",
              "MXU rows cannot exceed the vector lanes (an input row is one vreg row)");
    r.require(s.vmem_bytes % (4ll * s.lanes) == 0, "core.vector.vmem_bytes",
              "vector memory must be a whole number of rows (4 * lanes bytes)");
    r.require(s.xu_fifo * s.sublanes >= s.lanes, "core.xu.fifo",
              "the transpose FIFO must hold lanes/sublanes slices");
    r.require(s.hbm_bytes % 4 == 0 && s.hbm_bytes <= (4ll << 30) * 4, "core.hbm.bytes",
              fmt::format("{} bytes: HBM must be whole 32-bit words and addressable by a 32-bit "
                          "word address (<= 16 GiB)",
                          s.hbm_bytes));
    const HostMemory need = host_memory(s, 1);
    r.require(need.bytes <= host_memory_bytes(), need.key, need.why);
  }
  return s;
}

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

CoreSpec load_core_spec(const std::string& path) {
  ConfigReader r = ConfigReader::from_file(path);
  CoreSpec s = read_core_spec(r);
  r.finish();
  return s;
}

}  // namespace tessera::core
