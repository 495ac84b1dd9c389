// The Adam optimizer unit (docs/adam-unit.md): one per tensor core. Its blocks:
//   DMA            a path to HBM (core.adam.dma_latency, dma_bytes_per_cycle) for instructions,
//                  hyperparameters, theta and g in, theta out, and spilled m/v blocks;
//   instruction cache (icache_instrs 64-bit instructions, isa/adam_isa.h), filled by
//   INSTRUCTION_IO; controller     decodes one instruction per decode_cycles into micro-operations
//   for the DMA, the
//                  data cache and the data-processing module;
//   data cache     holds m and v (8 bytes per parameter) for the whole run, across runs;
//   data-processing module: `buffers` buffer sets of block_elements elements, an operation
//                  controller and vector add / multiply / divide / sqrt sub-modules (width
//                  elements per cycle, latency cycles each) and a basic (scalar fp64) sub-module.
//
// Values: numerics/adam.h, in program order (values never depend on time). Parameters are
// processed in blocks of B = block_elements (the last block may be short); `block` is the current
// block index, advanced by `bnext`.
//
// Capacity: the first floor(dcache_bytes / (8 B)) blocks keep m and v in the data cache; every
// later block keeps them in a spill area in HBM (ASSIGN's aA: m of element i >= R*B at
// spill + (i - R*B), v at spill + (n - R*B) + (i - R*B)). TRANSFER of a spilled block is a DMA
// (read for xfer.in, write for xfer.out) and ASSIGN zeroes the spill area by DMA: the cost shows in
// the spill_* byte counters and the DMA time.
//
// Timing (functional and timing in one pass; every instruction gets an issue cycle and a done
// cycle):
//   controller: instruction i issues at max(previous issue + decode_cycles, buffer free for DIO /
//     XFERIN); a taken branch delays the next issue to issue + branch_cycles; CCHECK waits for the
//     step's last PARAM_UPDATE (a control dependency). Other micro-ops never block the controller:
//     they wait in their unit for their operands (decoupled access/execute).
//   DMA: a request issued at c moves its bytes after c + dma_latency on the HBM path, filling the
//     first free cycles of the path (requests from different blocks overlap; the path carries one
//     request's bytes at a time): done = end of its last byte-cycle, ceil(bytes / bandwidth)
//     cycles in all.
//     Its bytes: 4 per word, or with core.hbm.exponent_encoding.on the exponent base-delta encoded
//     size of its words (core/hbm_encoding.h; the run's encoder), which the *_bytes counters of
//     AdamUnitStats (and so the unit's HBM energy) count too; values never change.
//   sub-modules: an instruction starts when its operands are ready and its sub-modules are free;
//     sub-module u is busy ceil(ops_u / width_u) cycles; the result is ready after the longest
//     busy time plus the latencies along the instruction's dependency chain
//     (MUPD: mul, add; PUPD: sqrt, div, add, div, mul, add, add, div, add; +mul with AdamW).
//   data cache port: TRANSFER of a resident block is busy ceil(8 Bk / dcache_bytes_per_cycle).
//   buffers: block k uses buffer set k mod buffers, free again when DBIO of the block that used it
//     before has read it out (a DMA write reads its buffer at the path's rate when its bytes move;
//     the rest of its latency is the flight to HBM: free = done - dma_latency).
//   run end (HALT) = the last of every outstanding micro-op.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "core/flag_calendar.h"
#include "core/spec.h"
#include "core/state.h"
#include "core/unit_energy.h"
#include "isa/adam_isa.h"
#include "numerics/optimizer.h"
#include "report/stats.h"

namespace tessera::core {

// Words of the hyperparameter block read by HYPERPARAMETER_IO (little-endian fp64 = 2 words):
//   [0,2) alpha  [2,4) beta1  [4,6) beta2  [6,8) epsilon  [8,10) ct  [10,12) weight decay
//   [12] max_iters (uint32, 0 = no limit)  [13..16) zero
inline constexpr int64_t kAdamHyperWords = 16;

struct AdamHyper {
  double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, ct = 0, weight_decay = 0;
  uint32_t max_iters = 0;
};
// The block's words; validate_adam_hyper throws tessera::Error("adam hyperparameters", why).
std::array<uint32_t, kAdamHyperWords> adam_hyper_words(const AdamHyper& h);
void validate_adam_hyper(const AdamHyper& h);

// The HBM path: a calendar of busy cycles, filled first-free-first.
class AdamHbmPath {
 public:
  // Occupies `cycles` free cycles at or after `earliest`; returns the cycle after the last one.
  int64_t occupy(int64_t earliest, int64_t cycles);
  // Forgets intervals ending before `now` (no later request starts before it).
  void forget_before(int64_t now);
  // Marks [from, to) busy for another HBM client (the core's DMA data already scheduled there);
  // with nothing of the unit's in that window it is taken whole.
  void block(int64_t from, int64_t to);
  // The unit's own busy intervals [start, end) occupied since clear_log() (a run's HBM cycles).
  const std::vector<std::pair<int64_t, int64_t>>& log() const { return m_log; }
  void clear_log() { m_log.clear(); }

 private:
  std::map<int64_t, int64_t> m_busy;  // start -> end, disjoint, not adjacent
  std::vector<std::pair<int64_t, int64_t>> m_log;
};

enum class AdamSub : uint8_t { Add, Mul, Div, Sqrt, Basic, DCache, Dma };
inline constexpr int kNumAdamSubs = 7;

struct AdamUnitStats {
  int64_t runs = 0, instructions = 0, micro_ops = 0, steps = 0;
  std::array<int64_t, isa::kNumAdamOps + 1> count{},
      cycles{};                                  // per AdamOp: issued, sum(done - issue)
  std::array<int64_t, kNumAdamSubs> busy{};      // busy cycles per sub-module
  std::array<int64_t, kNumAdamSubs> elements{};  // element operations per sub-module
  int64_t busy_cycles = 0;                       // cycles between start and halt, summed
  int64_t instr_bytes = 0, hyper_bytes = 0, theta_in_bytes = 0, g_in_bytes = 0, theta_out_bytes = 0;
  int64_t spill_in_bytes = 0, spill_out_bytes = 0, dcache_read_bytes = 0, dcache_write_bytes = 0;
  int64_t buffer_bytes = 0;
  int64_t hbm_read_bytes() const {
    return instr_bytes + hyper_bytes + theta_in_bytes + g_in_bytes + spill_in_bytes;
  }
  int64_t hbm_write_bytes() const { return theta_out_bytes + spill_out_bytes; }
};

// `after - before`, counter by counter (a run of steps' own counts).
AdamUnitStats operator-(const AdamUnitStats& after, const AdamUnitStats& before);

// The unit's energy (pJ) for the counts `s`: elements through each vector sub-module x its
// per-element energy, basic-module operations, data-cache bytes, processing-module buffer bytes,
// decoded instructions, and the unit's HBM bytes at `hbm_byte_pj`. `total` is their sum in this
// order.
using AdamUnitEnergy = UnitEnergy<9>;
AdamUnitEnergy adam_unit_energy(const AdamUnitSpec& spec, const AdamUnitStats& s,
                                double hbm_byte_pj);

class AdamUnit {
 public:
  explicit AdamUnit(const CoreSpec& spec);

  // Called at the first DATA_IO of every step (after MOMENT_ESTIMATE made it step t) so a host can
  // place g_t in HBM from the theta_t-1 there; its time is not charged to the unit.
  using GradientHook = std::function<void(PagedMemory& hbm, int64_t t)>;
  void set_gradient_hook(GradientHook hook) { m_hook = std::move(hook); }
  // Instructions one run may execute before it faults (a program that never halts).
  void set_instruction_limit(int64_t limit) { m_limit = limit; }

  // Runs the program at HBM word `addr` from cycle `start` (or when the unit is free, if later)
  // until HALT; returns the halt's completion cycle. Throws UnitFault ("adam unit: ...").
  // With `encoder` (core/hbm_encoding.h; nullptr: none) every DMA micro-op of the run moves, and
  // the byte counters count, the bytes it charges (the encoded size when its mode is on; 4 per word
  // otherwise), and it counts them per tensor kind.
  int64_t run(PagedMemory& hbm, int64_t addr, int64_t start, HbmEncoder* encoder = nullptr);

  // Completion flags owed to the tensor core (timed: at the run's end; units/adam_launcher.h).
  void add_completion(int flag, int64_t done) { m_owed.add(flag, done); }
  void retire(int64_t now, std::vector<uint32_t>& flags) { m_owed.retire(now, flags); }
  int64_t flag_ready(int flag, int64_t value, int64_t need) const {
    return m_owed.flag_ready(flag, value, need);
  }
  int64_t last_completion() const { return m_owed.last(); }

  int64_t busy_until() const { return m_busy_until; }
  // The HBM path shared with the core's DMA (units/adam_launcher.h): block() before a run, log()
  // after.
  AdamHbmPath& path() { return m_path; }
  int64_t t() const { return m_t; }
  int64_t n() const { return m_n; }
  float temp2() const { return m_temp2; }
  bool converged() const { return m_converged; }
  bool has_hyper() const { return m_has_hyper; }
  const AdamHyper& hyper() const { return m_hyper; }
  int64_t resident_blocks() const { return m_resident_blocks; }
  int64_t blocks() const { return m_blocks; }
  // m and v of element i wherever they live (data cache or HBM spill area).
  float m_at(const PagedMemory& hbm, int64_t i) const;
  float v_at(const PagedMemory& hbm, int64_t i) const;
  // Host access for checkpoints (after ASSIGN; i in [0, n)): m and v of element i wherever they
  // live, and the step count (the next MOMENT_ESTIMATE makes it t + 1). Throws tessera::Error.
  void set_moments(PagedMemory& hbm, int64_t i, float m, float v);
  void set_t(int64_t t);
  const AdamUnitStats& stats() const { return m_stats; }
  // The unit's statistics: instructions per kind and their cycles, sub-module busy, bytes, energy.
  void report(report::StatGroup& g, double hbm_byte_pj) const;

 private:
  struct Slot {
    int64_t free = 0, data_ready = 0, mv_ready = 0, mupd_done = 0, mvout_done = 0, pupd_done = 0;
  };
  struct Issue {
    int64_t at = 0, done = 0;
    bool taken = false;
    int64_t target = 0;
  };
  void execute(const isa::AdamInstr& in, int64_t pc, Issue& is);
  void exec_data(const isa::AdamInstr& in, Issue& is);
  void exec_compute(const isa::AdamInstr& in, Issue& is);
  void exec_control(const isa::AdamInstr& in, Issue& is);
  void fetch_program(int64_t addr, uint32_t count, Issue& is);
  void read_hyper(int64_t addr, Issue& is);
  void assign(int64_t spill, uint32_t n, Issue& is);
  void need_hyper_and_assign(std::string_view what) const;
  int64_t block_len() const;
  int64_t block_base() const { return m_block * m_spec.block_elements; }
  bool block_spilled() const { return m_block >= m_resident_blocks; }
  int64_t spill_m(int64_t i) const {
    return m_spill + (i - m_resident_blocks * m_spec.block_elements);
  }
  int64_t spill_v(int64_t i) const;
  int64_t hbm_bytes(std::initializer_list<std::span<const uint32_t>> chunks, HbmKind kind);
  int64_t dma(int64_t earliest, int64_t bytes);
  int64_t sub_start(int64_t ready, std::initializer_list<AdamSub> subs) const;
  void occupy(AdamSub s, int64_t start, int64_t elements, int width);
  void check_hbm(std::string_view what, int64_t addr, int64_t words) const;

  AdamUnitSpec m_spec;  // a copy: the unit must not outlive a caller's temporary spec
  EnergySpec m_energy;  // a copy, as m_spec
  PagedMemory* m_hbm = nullptr;
  HbmEncoder* m_encoder = nullptr;  // of the current run
  GradientHook m_hook;
  int64_t m_limit = int64_t{1} << 32;
  // controller and instruction cache
  std::vector<isa::AdamInstr> m_icache;
  std::array<uint32_t, isa::kAdamAddrRegs> m_areg{};
  int64_t m_program_addr = 0;
  // state
  bool m_has_hyper = false;
  AdamHyper m_hyper;
  numerics::AdamConstants m_const{};
  numerics::AdamStepScalars m_scalars{};
  float m_decay = 1.0f;
  int64_t m_n = 0, m_t = 0, m_block = 0, m_blocks = 0, m_resident_blocks = 0, m_iterations = 0;
  int64_t m_spill = 0;
  double m_sum = 0;
  float m_temp2 = 0;
  bool m_converged = false;
  std::vector<float> m_m, m_v;                          // data cache (resident blocks)
  std::vector<float> m_theta, m_prev, m_g, m_bm, m_bv;  // processing-module buffer (values)
  // timing
  AdamHbmPath m_path;
  std::vector<Slot> m_slots;
  std::array<int64_t, kNumAdamSubs> m_free{};
  int64_t m_hyper_ready = 0, m_scalars_ready = 0, m_step_done = 0, m_last = 0, m_busy_until = 0;
  FlagCalendar m_owed;  // completion flags owed to the tensor core
  AdamUnitStats m_stats;
};

}  // namespace tessera::core
