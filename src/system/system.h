// The timed multi-processor system: chips x cores_per_chip timed cores (processor p = chip
// p / cores_per_chip, core p % cores_per_chip) running BSP supersteps, their exchange carried by
// the packet fabric (fabric/fabric.h). Values equal the functional system's (functional_system.h):
// delivery order is defined by core/exchange.h, never by arrival times, so packet loss changes
// only time.
//
// Superstep of a sync group (times in integer picoseconds; a core cycle is 1e12 / clock_hz ps):
//   a_p  = time processor p issues `sync` + 1 cycle (arrives at the barrier)
//   B    = system.barrier_latency
//   compute->exchange barrier (placements kComputeToExchange, kBoth): every send is posted to the
//        fabric at max_p a_p + B; exchange->compute only (kExchangeToCompute): p's sends at a_p.
//   resume: kComputeToExchange: p continues at max(max_p a_p + B, arrival of every transfer p
//        sends or receives) (a processor may compute while others still exchange);
//        kExchangeToCompute, kBoth: everyone continues at max(max_p a_p [+ B for kBoth], last
//        arrival) + B.
// The wait is charged to the core's StallCause::Exchange.
// Split phase (a processor that issued `xsync`, core/exchange.h): it leaves the barrier at
//   max_p a_p + B (kComputeToExchange, kBoth) or at a_p (kExchangeToCompute) and computes on; its
//   exchange is done (its xwait / implied wait stalls until then, StallCause::Exchange) at the
//   time the rule above would have resumed it. The fabric posts and delivers exactly as for sync,
//   so values and the fabric's timing do not depend on the choice; the next superstep's sends are
//   posted after every processor's implied wait, i.e. after this superstep's last arrival. Each
//   sync group has its own Fabric
// (seeded with seed + group) and runs to completion independently of the others: groups share no
// links' time (a simplification; groups on disjoint chips are exact).
// The run ends when every processor has halted; end time = the latest core's last cycle.
//
// Distribution (MPI scale-out, communicator.h): the processors are spread over the ranks of
// SystemOptions::comm (pass &world() for the R processes of `mpirun -n R`; the default, nullptr,
// is this process alone, so a caller that reads every core keeps working) in contiguous
// blocks (processor_block); a rank builds and runs only its own cores. A superstep of group g:
//   1. every rank runs its processors of g to their sync (or halt, or a fault: recorded, not
//   thrown);
//   2. allgather: each processor's state, sync arrival, fault message and send headers
//   (destination,
//      address, combine, word count); alltoall: each send's payload goes to the rank that owns its
//      destination and only there (payloads cross processes only as MPI messages);
//   3. every rank then holds the whole superstep and runs the same deterministic code on it: the
//      lowest processor's fault, a barrier mismatch or a send outside the group is thrown as a
//      CollectiveError on every rank; every rank posts every transfer to the group's fabric
//      (those for other ranks' cores carry their size only: the fabric's timing does not depend
//      on values), and the ranks drain it together, each simulating the events of its own block
//      of chips (fabric/fabric.h Fabric::set_ranks), so every rank gets the same arrival times;
//      each rank applies the arrivals for its own cores and resumes them. run() ends with
//      Fabric::share_state, so the fabric statistics are the whole fabric's on every rank.
// Values, cycle counts, timing and statistics are therefore identical for any number of ranks
// (tests/system/mpi_test.cpp runs R = 1, 2, 3, 4 under mpirun). With one rank no byte is copied
// for a payload and the order of work is the single-process one.
//
// Host threads: within a rank, step 1 (the compute phase: each processor's core runs to its sync
// on its own Machine, touching nothing another processor touches) runs on a pool of
// SystemOptions::threads threads (common/thread_pool.h). Everything the processors share (the
// superstep records and payloads of step 2, faults, the fabric, statistics) is built after the
// phase in processor order, never in completion order, so values, cycles and statistics are
// identical for any thread count as well. for_each_local gives callers (the data-parallel trainer
// writing shards and loading programs) the same pool. host_json reports how the threads and ranks
// spent host time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/thread_pool.h"
#include "core/core.h"
#include "fabric/fabric.h"
#include "isa/image.h"
#include "system/bsp.h"
#include "system/communicator.h"
#include "system/system_spec.h"

namespace tessera::system {

struct SystemOptions {
  int sync_group_size = 0;   // processors per sync group (consecutive); 0 = one group of all
  uint64_t seed = 0;         // the fabric's loss streams
  core::RunOptions core{};   // per core (bundle limit)
  bool timing_only = false;  // xsend carries sizes, not values (benchmarks; core/exchange.h)
  Communicator* comm =
      nullptr;      // the ranks to spread the processors over; nullptr: this process alone
  int threads = 1;  // host threads running this rank's processors ("Host threads" above)
};

// One superstep's exchange on the critical path, in simulated picoseconds: the last waiting
// processor reached its sync (`arrived`), the first transfer was posted (`posted`: after the
// barrier before the exchange, if the placement has one; = the end of that barrier without
// transfers), the last transfer arrived (`delivered`; = `posted` without transfers) and the
// closing barrier ended (`released`: when every waiting processor goes on; with the placement
// compute-to-exchange a processor goes on once its own transfers are done, which may be earlier).
struct SuperstepSpan {
  int group = 0;
  int64_t step = 0;  // the superstep's index within its group's run()
  fabric::Picos arrived = 0, posted = 0, delivered = 0, released = 0;
};

// Per sync group: what its supersteps cost.
struct GroupTiming {
  int64_t supersteps = 0;
  fabric::Picos barrier_ps = 0;  // sum over supersteps of barrier latencies on the critical path
  fabric::Picos exchange_ps =
      0;  // sum over supersteps of (last arrival - posting) when sends exist
  uint64_t transfers = 0;
  uint64_t bytes = 0;
};

class System {
 public:
  // One image (S1110-S1130): processor p runs image.with_index(p).
  System(const core::CoreSpec& core, const SystemSpec& spec, const isa::Program& image,
         SystemOptions options = {});
  // One program per processor, run as given.
  System(const core::CoreSpec& core, const SystemSpec& spec,
         const std::vector<isa::Program>& programs, SystemOptions options = {});
  ~System();

  // Runs until every processor halts (collective: every rank calls it). Throws CollectiveError
  // naming the processor (and its pc, cycle and bundle) on a simulated fault, a send outside the
  // sync group, or a barrier mismatch, identically on every rank.
  void run();

  int processors() const { return m_spec.processors(); }
  // Processor p's core; only this rank's processors exist here (is_local), others throw Error.
  core::Core& core(int p);
  const core::Core& core(int p) const;
  bool is_local(int p) const { return m_local.contains(p); }
  ProcessorBlock local_processors() const { return m_local; }
  Communicator& communicator() const { return *m_comm; }
  // Runs body(p) for every local processor p on the system's host threads (common/thread_pool.h:
  // body(p) may touch only processor p's core; an exception is rethrown, the lowest p's).
  void for_each_local(const std::function<void(int p)>& body);
  // Runs body(i) for every i in [0, tasks) on the same threads, for the caller's own work between
  // runs (the data-parallel trainer's evaluation): body(i) may touch only what no other task
  // touches.
  void run_on_threads(int tasks, const std::function<void(int i)>& body);
  int threads() const { return m_pool->threads(); }
  // Collective: host time of the parallel run so far, gathered from every rank (host-time fields,
  // different from run to run): {threads, ranks, compute_phases, messages_between_ranks,
  // bytes_between_ranks, parallel_phase_seconds, parallel_speedup, per_rank: [{phase_seconds,
  // thread_busy_seconds, thread_wait_seconds, thread_cpu_seconds (each per thread:
  // ThreadPool::ThreadTime), messages_sent, bytes_sent, exchange_windows, exchange_busy_seconds,
  // exchange_wait_seconds, peak_rss_bytes}]}. Messages and bytes are the payloads this rank's
  // collectives sent to other ranks (Communicator::traffic, the fabric's windows included); the
  // exchange fields are the fabrics' windowed drains (fabric::FabricHostTime), peak_rss_bytes the
  // rank's peak resident memory so far; the speed-up is defined in system_host.cpp. `run_phases`
  // (optional): an object of host seconds the caller measured on this rank (named phases of its
  // run, e.g. runtime::RunLoop::host_phases_json); each rank's becomes its per_rank entry's
  // "phases", and their per-key maximum over the ranks the top-level "phases", after per_rank.
  nlohmann::ordered_json host_json(const nlohmann::ordered_json& run_phases = {}) const;
  // Collective: `read(core(p))` evaluated on the rank that owns p, returned on every rank (results
  // to be reported or compared: weights, vectors).
  Bytes from_processor(int p, const std::function<Bytes(const core::Core&)>& read) const;
  // The latest cycle of any core (after run(); the same on every rank).
  int64_t cycles() const { return m_cycles; }
  fabric::Picos end_ps() const { return m_end_ps; }
  double seconds() const { return static_cast<double>(m_end_ps) * 1e-12; }
  const std::vector<GroupTiming>& groups() const { return m_timing; }
  // Every superstep's spans from now on (off by default: a long run has many), in the order run.
  void record_supersteps() { m_record_supersteps = true; }
  const std::vector<SuperstepSpan>& superstep_spans() const { return m_superstep_spans; }
  const fabric::Fabric& fabric(int group) const {
    return *m_fabrics.at(static_cast<size_t>(group));
  }
  // {processors, supersteps, seconds, barrier/exchange seconds, per-group timing, fabric stats of
  // group 0}.
  nlohmann::ordered_json stats_json() const;

  // Checkpoints (runtime/data_parallel.h), between run()s only; collective (every rank calls
  // them). The state: end time, cycles, per-group timing, every processor's core clock
  // (Core::cycles, gathered from the ranks) and every group's fabric (Fabric::save_state).
  // restore_state needs a System of the same spec and sync groups whose cores are not past the
  // saved clocks; each rank advances its own cores' clocks (Core::advance_clock). A core's other
  // state (memories, registers) is not part of it: the caller restores what its programs read.
  // Errors name `where`: a state of another processor or group count, or malformed.
  nlohmann::ordered_json save_state() const;
  void restore_state(const nlohmann::ordered_json& state, const std::string& where);

  fabric::Picos cycles_to_ps(int64_t cycles) const;
  int64_t ps_to_cycles(
      fabric::Picos ps) const;  // the first cycle at or after ps (0.5 ps tolerance)

 private:
  // What both constructors do: `programs` programs (an error unless one per processor), the
  // local processors' cores make_core(p, timed options), built on the host threads (make_core is
  // called from several threads at once; the image's cores share one decoding of its code).
  template <typename MakeCore>
  System(const core::CoreSpec& core, const SystemSpec& spec, size_t programs,
         const MakeCore& make_core, SystemOptions options);
  void init(SystemOptions options);
  int64_t run_group(int g);
  void exchange(int g, int64_t step, const std::vector<int>& waiting,
                const std::vector<int64_t>& arrival, std::vector<Send> sends);
  fabric::Endpoint endpoint(int p) const;

  SystemSpec m_spec;
  Communicator* m_comm;
  ProcessorBlock m_local;
  double m_clock_hz;
  SyncGroups m_groups;
  std::vector<std::unique_ptr<core::Core>> m_cores;  // one per processor; null where not local
  std::vector<std::unique_ptr<fabric::Fabric>> m_fabrics;
  std::vector<GroupTiming> m_timing;
  std::unique_ptr<ThreadPool> m_pool;
  fabric::Picos m_end_ps = 0;
  int64_t m_cycles = 0;
  bool m_record_supersteps = false;
  std::vector<SuperstepSpan> m_superstep_spans;
};

}  // namespace tessera::system
