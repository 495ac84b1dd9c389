#include "system/system.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/byte_codec.h"
#include "core/host_memory.h"
#include "system/functional_system.h"

namespace tessera::system {

namespace {

enum class ProcState : uint8_t { kWaiting, kHalted, kFault };

Communicator& comm_of(const SystemOptions& o) {
  return o.comm != nullptr ? *o.comm : local_communicator();
}

ProcessorBlock local_block(const SystemSpec& spec, const SystemOptions& o) {
  Communicator& c = comm_of(o);
  return processor_block(spec.processors(), c.size(), c.rank());
}

// Runs `body`, whose errors every rank throws identically (it works on gathered data only), and
// turns them into CollectiveError.
template <typename F>
auto collectively(F&& body) {
  try {
    return body();
  } catch (const CollectiveError&) {
    throw;
  } catch (const Error& e) {
    throw CollectiveError(e.where(), e.why());
  }
}

}  // namespace

template <typename MakeCore>
System::System(const core::CoreSpec& core, const SystemSpec& spec, size_t programs,
               const MakeCore& make_core, SystemOptions options)
    : m_spec(spec),
      m_comm(&comm_of(options)),
      m_local(local_block(spec, options)),
      m_clock_hz(core.clock_hz),
      m_groups(spec.processors(), options.sync_group_size) {
  validate_system_spec(spec);
  if (programs != static_cast<size_t>(spec.processors()))
    throw Error("system",
                fmt::format("{} programs for {} processors", programs, spec.processors()));
  core::check_host_memory(core, m_local.count);
  m_cores.resize(programs);
  m_pool = std::make_unique<ThreadPool>(options.threads);
  for_each_local([&](int p) {  // each builds its own core only
    core::TimedOptions o;
    o.max_bundles = options.core.max_bundles;
    m_cores[static_cast<size_t>(p)] = make_core(p, o);
    join_system(m_cores[static_cast<size_t>(p)]->machine(), processors());
    m_cores[static_cast<size_t>(p)]->machine().set_exchange_timing_only(options.timing_only);
  });
  init(options);
}

System::System(const core::CoreSpec& core, const SystemSpec& spec, const isa::Program& image,
               SystemOptions options)
    : System(
          core, spec, static_cast<size_t>(spec.processors()),
          [&core, &image,
           decoded = std::make_shared<const core::DecodedProgram>(
               core::decode_program(image.code, core))](int p, const core::TimedOptions& o) {
            return std::make_unique<core::Core>(core, image, decoded, static_cast<uint32_t>(p), o);
          },
          options) {}

System::System(const core::CoreSpec& core, const SystemSpec& spec,
               const std::vector<isa::Program>& programs, SystemOptions options)
    : System(
          core, spec, programs.size(),
          [&core, &programs](int p, const core::TimedOptions& o) {
            return std::make_unique<core::Core>(core, programs[static_cast<size_t>(p)], o);
          },
          options) {}

System::~System() {
  if (m_pool)  // each frees its own core's memories
    for_each_local([&](int p) { m_cores[static_cast<size_t>(p)].reset(); });
}

void System::init(SystemOptions options) {
  for (int g = 0; g < m_groups.count(); ++g) {
    m_fabrics.push_back(
        std::make_unique<fabric::Fabric>(m_spec, options.seed + static_cast<uint64_t>(g)));
    m_fabrics.back()->set_workers(m_pool.get());  // the exchange phase's partitions
    m_fabrics.back()->set_ranks(m_comm);          // and the ranks' blocks of chips
  }
  m_timing.assign(static_cast<size_t>(m_groups.count()), GroupTiming{});
}

void System::for_each_local(const std::function<void(int p)>& body) {
  m_pool->run(m_local.count, [&](int i) { body(m_local.first + i); });
}

void System::run_on_threads(int tasks, const std::function<void(int i)>& body) {
  m_pool->run(tasks, body);
}

fabric::Picos System::cycles_to_ps(int64_t cycles) const {
  return std::llround(static_cast<double>(cycles) * 1e12 / m_clock_hz);
}

int64_t System::ps_to_cycles(fabric::Picos ps) const {
  // Times carry cycles_to_ps's rounding (<= 0.5 ps): a time within it of a cycle edge is that
  // cycle.
  return static_cast<int64_t>(std::ceil((static_cast<double>(ps) - 0.5) * m_clock_hz / 1e12));
}

fabric::Endpoint System::endpoint(int p) const {
  return {p / m_spec.cores_per_chip, p % m_spec.cores_per_chip};
}

core::Core& System::core(int p) {
  return const_cast<core::Core&>(static_cast<const System*>(this)->core(p));
}

const core::Core& System::core(int p) const {
  if (p < 0 || p >= processors())
    throw Error("system", fmt::format("processor {} out of range (0..{})", p, processors() - 1));
  if (!is_local(p))
    throw Error("system",
                fmt::format("processor {} is simulated by rank {}, not by this rank {}", p,
                            rank_of_processor(p, processors(), m_comm->size()), m_comm->rank()));
  return *m_cores[static_cast<size_t>(p)];
}

Bytes System::from_processor(int p, const std::function<Bytes(const core::Core&)>& read) const {
  const int owner = rank_of_processor(p, processors(), m_comm->size());
  return m_comm->broadcast(owner == m_comm->rank() ? read(core(p)) : Bytes{}, owner);
}

void System::run() {
  for (int g = 0; g < m_groups.count(); ++g)
    m_timing[static_cast<size_t>(g)].supersteps = run_group(g);
  for (const auto& f : m_fabrics) f->share_state();
  int64_t cycles = 0;
  for (const auto& c : m_cores)
    if (c) cycles = std::max(cycles, c->cycles());
  m_cycles = allreduce_max(*m_comm, cycles);
  m_end_ps = cycles_to_ps(m_cycles);
}

// One superstep of group g on every rank, in the message format of step 2 (system.h):
//   header, per local processor of g in order: int32 p, uint8 ProcState, int64 sync arrival,
//     string fault where, string fault why, uint32 sends, per send: uint32 dst, uint32 address,
//     uint8 combine, uint32 count, uint8 has_words;
//   payload to rank r: the words of this rank's sends to r's processors, in header order.
int64_t System::run_group(int g) {
  const int first = m_groups.first(g), n = m_groups.size(g), ranks = m_comm->size(),
            me = m_comm->rank();
  const int lo = std::max(first, m_local.first),
            hi = std::min(first + n, m_local.first + m_local.count);
  std::vector<char> done(static_cast<size_t>(n), 0);  // the same on every rank
  for (int64_t step = 0;; ++step) {
    ByteWriter head;
    std::vector<ByteWriter> payload(static_cast<size_t>(ranks));
    std::vector<std::vector<uint32_t>> kept;  // payloads of sends between this rank's processors
    struct Outcome {
      ProcState state = ProcState::kHalted;
      std::string where, why;
    };
    std::vector<Outcome> outcome(static_cast<size_t>(std::max(0, hi - lo)));
    m_pool->run(hi - lo, [&](int i) {  // the compute phase ("Host threads", system.h)
      const int p = lo + i;
      if (done[static_cast<size_t>(p - first)]) return;
      Outcome& o = outcome[static_cast<size_t>(i)];
      try {
        o.state = m_cores[static_cast<size_t>(p)]->run_to_sync() ? ProcState::kWaiting
                                                                 : ProcState::kHalted;
      } catch (const Error& e) {
        o.state = ProcState::kFault;
        o.where = processor_name(p, m_spec.cores_per_chip) + ": " + e.where();
        o.why = e.why();
      }
    });
    for (int p = lo; p < hi; ++p) {
      core::Core& c = *m_cores[static_cast<size_t>(p)];
      const Outcome& o = outcome[static_cast<size_t>(p - lo)];
      head.put(static_cast<int32_t>(p));
      head.put(o.state);
      head.put(static_cast<int64_t>(o.state == ProcState::kWaiting ? c.sync_arrival() : 0));
      head.put_string(o.where);
      head.put_string(o.why);
      std::vector<core::OutboundSend>& box = c.machine().outbox();
      head.put(static_cast<uint32_t>(box.size()));
      for (core::OutboundSend& s : box) {
        head.put(s.dst_proc);
        head.put(s.dst_addr);
        head.put(s.combine);
        head.put(s.count);
        head.put(static_cast<uint8_t>(!s.words.empty()));
        if (s.words.empty() || s.dst_proc >= static_cast<uint32_t>(processors())) continue;
        const int owner = rank_of_processor(static_cast<int>(s.dst_proc), processors(), ranks);
        if (owner == me)
          kept.push_back(std::move(s.words));
        else
          payload[static_cast<size_t>(owner)].append(s.words.data(),
                                                     s.words.size() * sizeof(uint32_t));
      }
      box.clear();
    }
    const std::vector<Bytes> heads = m_comm->allgather(head.bytes());
    std::vector<Bytes> to(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
      to[static_cast<size_t>(r)] = std::move(payload[static_cast<size_t>(r)].bytes());
    const std::vector<Bytes> from = m_comm->alltoall(to);

    const bool finished = collectively([&] {
      std::vector<ProcState> state(static_cast<size_t>(n), ProcState::kHalted);
      std::vector<int64_t> arrival(static_cast<size_t>(processors()), 0);
      std::vector<std::pair<std::string, std::string>> fault(static_cast<size_t>(n));
      std::vector<Send> sends;
      size_t next_kept = 0;
      for (int r = 0; r < ranks; ++r) {
        ByteReader in(heads[static_cast<size_t>(r)]), words(from[static_cast<size_t>(r)]);
        while (!in.done()) {
          const int p = in.get<int32_t>();
          TESSERA_CHECK(p >= first && p < first + n,
                        "superstep record of a processor outside the group");
          const size_t i = static_cast<size_t>(p - first);
          state[i] = in.get<ProcState>();
          arrival[static_cast<size_t>(p)] = in.get<int64_t>();
          fault[i].first = in.get_string();
          fault[i].second = in.get_string();
          const uint32_t count = in.get<uint32_t>();
          for (uint32_t k = 0; k < count; ++k) {
            Send s{p, k, {}};
            s.send.dst_proc = in.get<uint32_t>();
            s.send.dst_addr = in.get<uint32_t>();
            s.send.combine = in.get<core::XCombine>();
            s.send.count = in.get<uint32_t>();
            const bool has_words = in.get<uint8_t>() != 0;
            if (has_words && is_local(static_cast<int>(s.send.dst_proc))) {
              if (r == me) {
                s.send.words = std::move(kept.at(next_kept++));
              } else {
                s.send.words.resize(s.send.count);
                words.read(s.send.words.data(), s.send.words.size() * sizeof(uint32_t));
              }
            }
            sends.push_back(std::move(s));
          }
        }
        TESSERA_CHECK(words.done(), "superstep payload longer than its sends");
      }
      for (int i = 0; i < n; ++i) {
        if (state[static_cast<size_t>(i)] == ProcState::kFault)
          throw Error(fault[static_cast<size_t>(i)].first, fault[static_cast<size_t>(i)].second);
        done[static_cast<size_t>(i)] = state[static_cast<size_t>(i)] == ProcState::kHalted ? 1 : 0;
      }
      const std::vector<int> waiting = waiting_processors(m_groups, g, step, done);
      if (waiting.empty()) return true;
      exchange(g, step, waiting, arrival, std::move(sends));
      return false;
    });
    if (finished) return step;
  }
}

void System::exchange(int g, int64_t step, const std::vector<int>& waiting,
                      const std::vector<int64_t>& arrival, std::vector<Send> sends) {
  fabric::Fabric& fab = *m_fabrics[static_cast<size_t>(g)];
  GroupTiming& timing = m_timing[static_cast<size_t>(g)];
  const fabric::Picos barrier = ns_to_ps(m_spec.barrier_latency_ns);
  const BarrierPlacement placement = m_spec.barrier_placement;
  fabric::Picos all_arrived = 0;
  for (int p : waiting)
    all_arrived = std::max(all_arrived, cycles_to_ps(arrival[static_cast<size_t>(p)]));
  const bool barrier_before = placement != BarrierPlacement::kExchangeToCompute;
  const fabric::Picos post_all = all_arrived + (barrier_before ? barrier : 0);

  for (const Send& s : sends) check_group_target(m_groups, g, s.src, s.send.dst_proc, step);
  sort_for_delivery(sends);
  fabric::Picos first_post = post_all;
  for (Send& s : sends) {
    fabric::Transfer t;
    t.src = endpoint(s.src);
    t.dst = endpoint(static_cast<int>(s.send.dst_proc));
    t.dst_addr = s.send.dst_addr;
    t.combine = static_cast<fabric::Combine>(s.send.combine);
    t.words = std::move(s.send.words);  // empty for another rank's processor: its size only
    if (t.words.empty()) t.phantom_words = s.send.count;
    t.id = s.seq;
    timing.bytes += uint64_t{s.send.count} * 4;
    const fabric::Picos ready =
        barrier_before ? post_all : cycles_to_ps(arrival[static_cast<size_t>(s.src)]);
    first_post = std::min(first_post, ready);
    fab.post(std::max(ready, fab.now()), std::move(t));
  }
  std::vector<fabric::Arrival> arrivals =
      sends.empty() ? std::vector<fabric::Arrival>{} : fab.drain();
  timing.transfers += arrivals.size();

  // Values: per receiver, by source processor, then program order (core/exchange.h).
  auto proc_of = [&](const fabric::Endpoint& e) { return e.chip * m_spec.cores_per_chip + e.core; };
  std::sort(arrivals.begin(), arrivals.end(),
            [&](const fabric::Arrival& a, const fabric::Arrival& b) {
              const int da = proc_of(a.transfer.dst), db = proc_of(b.transfer.dst);
              if (da != db) return da < db;
              const int sa = proc_of(a.transfer.src), sb = proc_of(b.transfer.src);
              if (sa != sb) return sa < sb;
              return a.transfer.id < b.transfer.id;
            });
  // Each local receiver's arrivals, in that order, on the host threads (each touches its own core).
  std::vector<std::pair<size_t, size_t>> received;  // [first, end) of arrivals per local receiver
  for (size_t i = 0, end = 0; i < arrivals.size(); i = end) {
    const int dst = proc_of(arrivals[i].transfer.dst);
    for (end = i + 1; end < arrivals.size() && proc_of(arrivals[end].transfer.dst) == dst;) ++end;
    if (is_local(dst)) received.emplace_back(i, end);
  }
  if (!received.empty())
    m_pool->run(static_cast<int>(received.size()), [&](int r) {
      const auto [first, end] = received[static_cast<size_t>(r)];
      core::Machine& m = core(proc_of(arrivals[first].transfer.dst)).machine();
      for (size_t i = first; i < end; ++i) {
        const fabric::Transfer& t = arrivals[i].transfer;
        m.receive(static_cast<uint32_t>(t.dst_addr), static_cast<core::XCombine>(t.combine),
                  t.words.data(), t.words.size());
      }
    });
  fabric::Picos last = 0;
  std::vector<fabric::Picos> own(static_cast<size_t>(processors()),
                                 0);  // latest arrival p sent or received
  for (const fabric::Arrival& a : arrivals) {
    const int dst = proc_of(a.transfer.dst), src = proc_of(a.transfer.src);
    last = std::max(last, a.time);
    own[static_cast<size_t>(dst)] = std::max(own[static_cast<size_t>(dst)], a.time);
    own[static_cast<size_t>(src)] = std::max(own[static_cast<size_t>(src)], a.time);
  }
  if (!arrivals.empty()) timing.exchange_ps += last - first_post;
  timing.barrier_ps += placement == BarrierPlacement::kBoth ? 2 * barrier : barrier;
  const fabric::Picos everyone = std::max(barrier_before ? post_all : all_arrived, last) + barrier;
  if (m_record_supersteps)
    m_superstep_spans.push_back({g, step, all_arrived, arrivals.empty() ? post_all : first_post,
                                 arrivals.empty() ? post_all : last, everyone});
  for (int p : waiting) {
    if (!is_local(p)) continue;
    const fabric::Picos at = placement == BarrierPlacement::kComputeToExchange
                                 ? std::max(post_all, own[static_cast<size_t>(p)])
                                 : everyone;
    core::Machine& m = core(p).machine();
    if (!m.exchange_pending()) {
      core(p).resume(ps_to_cycles(at));
      continue;
    }
    // xsync: the core leaves the barrier (before the exchange: at posting; without one: at once)
    // and its wait ends when the blocking sync would have resumed it.
    m.set_exchange_done(ps_to_cycles(at));
    core(p).resume(
        ps_to_cycles(barrier_before ? post_all : cycles_to_ps(arrival[static_cast<size_t>(p)])));
  }
}

nlohmann::ordered_json System::stats_json() const {
  nlohmann::ordered_json j;
  j["processors"] = processors();
  j["chips"] = m_spec.chips;
  j["cores_per_chip"] = m_spec.cores_per_chip;
  j["barrier_placement"] = barrier_placement_name(m_spec.barrier_placement);
  j["seconds"] = seconds();
  j["cycles"] = m_cycles;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const GroupTiming& t : m_timing)
    groups.push_back({{"supersteps", t.supersteps},
                      {"barrier_seconds", static_cast<double>(t.barrier_ps) * 1e-12},
                      {"exchange_seconds", static_cast<double>(t.exchange_ps) * 1e-12},
                      {"transfers", t.transfers},
                      {"bytes", t.bytes}});
  j["sync_groups"] = groups;
  j["fabric"] = m_fabrics.front()->stats().to_json();
  return j;
}

}  // namespace tessera::system
