// The sparse core (docs/sparse-core.md): one per processor, beside its tensor core. It maps ids to
// rows of embedding tables in the processor's HBM, reduces the rows of a bag, scatters row
// gradients back, de-duplicates ids and updates table rows with a sparse optimizer. The host or
// the compiler fills its descriptor queue; the tensor core and the sparse core hand off through
// sync flags: a descriptor may increment a tensor-core flag when it completes (its results are in
// HBM or in the tensor core's vector memory by then), and a wait descriptor waits on one of the
// sparse core's own flags, which the tensor core (or the host) increments.
//
// Data in HBM (32-bit words; addresses are word addresses):
//   table      rows x dim fp32, row-major, at `base` (registered with add_table);
//   bags       `bags` + 1 offsets (offsets[0] = 0, non-decreasing) and offsets[bags] ids (uint32);
//              bag b holds ids [offsets[b], offsets[b+1]);
//   gradients  fp32 rows, row-major.
// Descriptors (values: numerics/embedding_bag.h, numerics/sparse_optimizer.h):
//   gather       rows of the bags' ids combined per bag (sum, mean: bags x dim; none: one row per
//                id) to HBM or to the tensor core's vector memory at `dst`;
//   dedup        the distinct ids of the bags in ascending order to `unique`, their count to the
//                word `count`, and for every id position its index among them to `inverse`;
//   scatter_add  bag gradients (bags x dim; none: one row per id) at `src` to the gradients of the
//                distinct ids: dst row inverse[i] receives id i's share (zeroed first, positions in
//                order); the count of rows is read from the word `count`; a dense one writes the
//                table-shaped gradient instead: dst is rows x dim, row id receives the shares of
//                that id's positions (zeroed first, positions in order), every other row is zero
//                (inverse and count are not read);
//   update       the rows of the distinct ids at `ids` (count at the word `count`) by their
//                gradients at `src`: SGD, or Adagrad with table-shaped accumulators at `state` and
//                the table's own step count (incremented by each Adagrad update of the table);
//   wait         until own flag `flag` >= `count`, then flag -= count.
// Values are computed when run() executes a descriptor, in queue order; they never depend on time.
// Faults: an id outside its table, a word range outside HBM or vector memory, malformed offsets,
// an inverse index outside the count and a wait nothing can satisfy throw SimFault naming the
// descriptor (its index in the run, as pc), its start cycle and the reason.
//
// Timing (one descriptor at a time, in queue order):
//   HBM stream of R requests of q = hbm_request_bytes each (x = q / hbm_bytes_per_cycle transfer
//   cycles, L = hbm_latency, k = hbm_outstanding): request j issues at j * max(x, (L + x) / k);
//   the stream takes L + ceil((R - 1) * max(x, (L + x) / k) + x) cycles (0 for R = 0). A word
//   range of B bytes is ceil(B / q) requests; a table row ceil(4 dim / q). Bytes of HBM traffic
//   are R * q (whole requests).
//   A descriptor starts when the previous one is done and takes descriptor_cycles, then:
//   gather       meta(ids, offsets) + max(rows(n), front(n), simd(ops)) + out
//   dedup        meta(ids, offsets) + front(n) + stream(unique, inverse, count)
//   scatter_add  meta(ids, offsets, inverse, count, src) + max(front(n), simd(ops)) + stream(dst)
//                (dense: meta(ids, offsets, src), and dst is the whole rows x dim)
//   update       meta(ids, count, src) + max(rows(u * a), front(u), simd(ops)) + rows(u * a)
//                (a = 1 for SGD, 2 for Adagrad: the accumulator rows; the second term writes)
//   wait         done at the later of its decode and the cycle its flag's increments arrive
//   where meta(...) is one stream of the ranges' requests, rows(m) a stream of m table rows'
//   requests, front(n) = ceil(n / ids_per_cycle), simd(e) = ceil(e / simd_width) with e the
//   element operations (sum: n dim adds; mean: + bags dim divides; none: 0; scatter_add: n dim
//   adds, + n dim divides for mean; update: 2 u dim for SGD, 7 u dim for Adagrad), and out a
//   stream of the output to HBM or, to vector memory, vmem_latency + ceil(bytes /
//   vmem_bytes_per_cycle). A descriptor's tensor-core flag is incremented at its done cycle.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/flag_calendar.h"
#include "core/spec.h"
#include "core/state.h"
#include "core/unit_energy.h"
#include "numerics/embedding_bag.h"
#include "report/stats.h"

namespace tessera::core {

using numerics::Combiner;

struct SparseTable {
  std::string name;
  int64_t base = 0;  // HBM word address of row 0
  int64_t rows = 0;
  int64_t dim = 0;
};

struct SparseBags {
  int64_t ids = 0, offsets = 0, bags = 0;
};

enum class SparseDest : uint8_t { Hbm, Vmem };

struct SparseGather {
  int table = 0;
  SparseBags in;
  Combiner combiner = Combiner::Sum;
  SparseDest to = SparseDest::Hbm;
  int64_t dst = 0;
};
struct SparseDedup {
  SparseBags in;
  int64_t unique = 0, count = 0, inverse = 0;
};
struct SparseScatterAdd {
  int table = 0;  // the rows' dim (and, dense, their count)
  SparseBags in;
  Combiner combiner = Combiner::Sum;
  int64_t src = 0, inverse = 0, count = 0, dst = 0;
  bool dense = false;  // dst is table-shaped, its rows indexed by id
};
enum class SparseOptimizer : uint8_t { Sgd, Adagrad };
struct SparseUpdate {
  int table = 0;
  int64_t ids = 0, count = 0, src = 0;
  SparseOptimizer optimizer = SparseOptimizer::Sgd;
  double lr = 0.01, lr_decay = 0;  // lr_decay: Adagrad only
  float eps = 1e-10f;              // Adagrad only
  int64_t state = 0;               // Adagrad only: accumulators, rows x dim at this word address
};
struct SparseWait {
  int flag = 0;
  int64_t count = 1;
};

struct SparseDescriptor {
  std::variant<SparseGather, SparseDedup, SparseScatterAdd, SparseUpdate, SparseWait> op;
  int signal = -1;  // tensor-core sync flag incremented when the descriptor completes; -1: none
};

// One line naming the descriptor and its operands (faults, traces).
std::string describe(const SparseDescriptor& d, const std::vector<SparseTable>& tables);

// The unit's counters: THE list is sparse_counters.def.
struct SparseCoreStats {
#define X(field, what) int64_t field = 0;
#include "core/sparse_counters.def"
#undef X
};

// The unit's energy (pJ) for the counts `s`: ids through the front end, SIMD element operations,
// bytes into vector memory, descriptors, and HBM bytes at `hbm_byte_pj`; total is their sum.
using SparseCoreEnergy = UnitEnergy<5>;
SparseCoreEnergy sparse_core_energy(const SparseCoreSpec& spec, const SparseCoreStats& s,
                                    double hbm_byte_pj);

class SparseCore {
 public:
  explicit SparseCore(const CoreSpec& spec);

  // Registers a table in HBM of `hbm_words` words; returns its index. Throws tessera::Error for an
  // empty table or one outside HBM.
  int add_table(SparseTable table, int64_t hbm_words);
  const std::vector<SparseTable>& tables() const { return m_tables; }

  // Appends a descriptor. Throws tessera::Error when the queue is full, a table index or a flag
  // is out of range.
  void enqueue(SparseDescriptor d);
  int64_t queued() const { return static_cast<int64_t>(m_queue.size()); }

  // Executes every queued descriptor in order on the processor whose tensor-core state is `core`
  // (its HBM, vector memory and flags), from cycle `start` (or when the unit is free, if later);
  // empties the queue and returns the cycle the last descriptor completed. Tensor-core flags are
  // owed, not set: retire() sets them. Throws SimFault.
  int64_t run(ArchState& core, int64_t start);

  // One increment of the sparse core's own flag `flag`, arriving at cycle `at`: the completion of
  // the tensor core's dma.vh.sc (core/units/dma_unit.h), or the host.
  void signal(int flag, int64_t at);
  uint32_t own_flag(int flag) const { return m_own[static_cast<size_t>(flag)]; }

  // Tensor-core flags owed by completed descriptors (FlagCalendar).
  void retire(int64_t now, std::vector<uint32_t>& flags) { m_owed.retire(now, flags); }
  int64_t flag_ready(int flag, int64_t value, int64_t need) const {
    return m_owed.flag_ready(flag, value, need);
  }
  int64_t last_completion() const { return m_owed.last(); }

  int64_t busy_until() const { return m_free; }
  // Adagrad's step count of table `t` (checkpoints: set it back).
  int64_t adagrad_step(int t) const { return m_steps[static_cast<size_t>(t)]; }
  void set_adagrad_step(int t, int64_t step);
  const SparseCoreStats& stats() const { return m_stats; }
  // The unit's statistics: descriptors, ids, rows, HBM traffic, cycles, energy.
  void report(report::StatGroup& g, double hbm_byte_pj) const;

  // The timing model's HBM stream (header comment): cycles of R requests; requests of a range.
  int64_t hbm_stream(int64_t requests) const;
  int64_t requests_of(int64_t bytes) const;

 private:
  struct Bags {
    std::vector<uint32_t> ids, offsets;
  };
  int64_t execute(const SparseDescriptor& d, int64_t start);
  int64_t gather(const SparseGather& g, int64_t start);
  int64_t dedup(const SparseDedup& d, int64_t start);
  int64_t scatter_add(const SparseScatterAdd& s, int64_t start);
  int64_t update(const SparseUpdate& u, int64_t start);
  int64_t wait(const SparseWait& w, int64_t start);
  Bags read_bags(const SparseBags& b);
  uint32_t read_count(int64_t addr);
  void check_hbm(const char* what, int64_t addr, int64_t words) const;
  void check_id(const SparseTable& t, uint32_t id, int64_t position) const;
  [[noreturn]] void fault(const std::string& why) const;
  int64_t front(int64_t ids) const;
  int64_t simd(int64_t ops) const;
  int64_t stream_bytes(std::initializer_list<int64_t> bytes, bool write);
  int64_t row_stream(const SparseTable& t, int64_t rows, bool write);

  SparseCoreSpec m_spec;  // a copy: the unit must not outlive a caller's temporary spec
  int m_core_flags;
  std::vector<SparseTable> m_tables;
  std::vector<int64_t> m_steps;  // Adagrad step count per table
  std::vector<SparseDescriptor> m_queue;
  std::vector<uint32_t> m_own;
  FlagCalendar m_incoming, m_owed;
  ArchState* m_core = nullptr;  // of the current run
  int64_t m_pc = 0, m_at = 0;   // the executing descriptor and its start (faults)
  int64_t m_free = 0;
  SparseCoreStats m_stats;
};

}  // namespace tessera::core
