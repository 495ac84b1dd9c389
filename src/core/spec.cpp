#include "core/spec.h"

#include <bit>
#include <iterator>

#include <fmt/format.h>

#include "core/host_memory.h"
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

// Vector memory is addressed by word in 32-bit immediates (DMA and the compiler's addresses), so it
// holds at most 2^31 words.
constexpr int64_t kMaxVmemBytes = int64_t{1} << 33;

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
  s.sparse = read_sparse_core_spec(r);

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
    // One core must fit the host (core/host_memory.h).
    const HostMemory need = host_memory(s, 1);
    r.require(need.bytes <= host_memory_bytes(), need.key, need.why);
  }
  return s;
}

CoreSpec load_core_spec(const std::string& path) {
  ConfigReader r = ConfigReader::from_file(path);
  CoreSpec s = read_core_spec(r);
  r.finish();
  return s;
}

}  // namespace tessera::core
