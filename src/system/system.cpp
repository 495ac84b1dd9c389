#include "system/system.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "system/functional_system.h"

namespace tessera::system {

System::System(const core::CoreSpec& core, const SystemSpec& spec, const isa::Program& image, SystemOptions options)
    : m_spec(spec), m_clock_hz(core.clock_hz), m_groups(spec.processors(), options.sync_group_size) {
  validate_system_spec(spec);
  for (int p = 0; p < spec.processors(); ++p) {
    core::TimedOptions o;
    o.max_bundles = options.core.max_bundles;
    m_cores.push_back(std::make_unique<core::Core>(core, image.with_index(static_cast<uint32_t>(p)), o));
  }
  init(core, options);
}

System::System(const core::CoreSpec& core, const SystemSpec& spec, const std::vector<isa::Program>& programs,
               SystemOptions options)
    : m_spec(spec), m_clock_hz(core.clock_hz), m_groups(spec.processors(), options.sync_group_size) {
  validate_system_spec(spec);
  if (static_cast<int>(programs.size()) != spec.processors())
    throw Error("system", fmt::format("{} programs for {} processors", programs.size(), spec.processors()));
  for (const isa::Program& program : programs) {
    core::TimedOptions o;
    o.max_bundles = options.core.max_bundles;
    m_cores.push_back(std::make_unique<core::Core>(core, program, o));
  }
  init(core, options);
}

System::~System() = default;

void System::init(const core::CoreSpec&, SystemOptions options) {
  for (auto& c : m_cores) {
    join_system(c->machine(), processors());
    c->machine().set_exchange_timing_only(options.timing_only);
  }
  for (int g = 0; g < m_groups.count(); ++g)
    m_fabrics.push_back(std::make_unique<fabric::Fabric>(m_spec, options.seed + static_cast<uint64_t>(g)));
  m_timing.assign(static_cast<size_t>(m_groups.count()), GroupTiming{});
}

fabric::Picos System::cycles_to_ps(int64_t cycles) const {
  return std::llround(static_cast<double>(cycles) * 1e12 / m_clock_hz);
}

int64_t System::ps_to_cycles(fabric::Picos ps) const {
  // Times carry cycles_to_ps's rounding (<= 0.5 ps): a time within it of a cycle edge is that cycle.
  return static_cast<int64_t>(std::ceil((static_cast<double>(ps) - 0.5) * m_clock_hz / 1e12));
}

fabric::Endpoint System::endpoint(int p) const { return {p / m_spec.cores_per_chip, p % m_spec.cores_per_chip}; }

void System::run() {
  for (int g = 0; g < m_groups.count(); ++g) {
    m_timing[static_cast<size_t>(g)].supersteps = run_group(
        m_groups, g, m_spec.cores_per_chip, [&](int p) { return core(p).run_to_sync(); },
        [&](int64_t step, const std::vector<int>& waiting) { exchange(g, step, waiting); });
  }
  m_end_ps = 0;
  for (const auto& c : m_cores) m_end_ps = std::max(m_end_ps, cycles_to_ps(c->cycles()));
}

void System::exchange(int g, int64_t step, const std::vector<int>& waiting) {
  fabric::Fabric& fab = *m_fabrics[static_cast<size_t>(g)];
  GroupTiming& timing = m_timing[static_cast<size_t>(g)];
  const fabric::Picos barrier = ns_to_ps(m_spec.barrier_latency_ns);
  const BarrierPlacement placement = m_spec.barrier_placement;
  fabric::Picos all_arrived = 0;
  for (int p : waiting) all_arrived = std::max(all_arrived, cycles_to_ps(core(p).sync_arrival()));
  const bool barrier_before = placement != BarrierPlacement::kExchangeToCompute;
  const fabric::Picos post_all = all_arrived + (barrier_before ? barrier : 0);

  std::vector<Send> sends =
      collect_sends(m_groups, g, step, [&](int p) -> std::vector<core::OutboundSend>& { return core(p).machine().outbox(); });
  fabric::Picos first_post = post_all;
  for (Send& s : sends) {
    fabric::Transfer t;
    t.src = endpoint(s.src);
    t.dst = endpoint(static_cast<int>(s.send.dst_proc));
    t.dst_addr = s.send.dst_addr;
    t.combine = static_cast<fabric::Combine>(s.send.combine);
    t.words = std::move(s.send.words);
    if (t.words.empty()) t.phantom_words = s.send.count;
    t.id = s.seq;
    timing.bytes += uint64_t{s.send.count} * 4;
    const fabric::Picos ready = barrier_before ? post_all : cycles_to_ps(core(s.src).sync_arrival());
    first_post = std::min(first_post, ready);
    fab.post(std::max(ready, fab.now()), std::move(t));
  }
  std::vector<fabric::Arrival> arrivals = sends.empty() ? std::vector<fabric::Arrival>{} : fab.drain();
  timing.transfers += arrivals.size();

  // Values: per receiver, by source processor, then program order (core/exchange.h).
  auto proc_of = [&](const fabric::Endpoint& e) { return e.chip * m_spec.cores_per_chip + e.core; };
  std::sort(arrivals.begin(), arrivals.end(), [&](const fabric::Arrival& a, const fabric::Arrival& b) {
    const int da = proc_of(a.transfer.dst), db = proc_of(b.transfer.dst);
    if (da != db) return da < db;
    const int sa = proc_of(a.transfer.src), sb = proc_of(b.transfer.src);
    if (sa != sb) return sa < sb;
    return a.transfer.id < b.transfer.id;
  });
  fabric::Picos last = 0;
  std::vector<fabric::Picos> own(static_cast<size_t>(processors()), 0);  // latest arrival p sent or received
  for (const fabric::Arrival& a : arrivals) {
    const int dst = proc_of(a.transfer.dst), src = proc_of(a.transfer.src);
    core::apply_receive(core(dst).machine().state(), static_cast<uint32_t>(a.transfer.dst_addr),
                        static_cast<core::XCombine>(a.transfer.combine), a.transfer.words.data(), a.transfer.words.size());
    last = std::max(last, a.time);
    own[static_cast<size_t>(dst)] = std::max(own[static_cast<size_t>(dst)], a.time);
    own[static_cast<size_t>(src)] = std::max(own[static_cast<size_t>(src)], a.time);
  }
  if (!arrivals.empty()) timing.exchange_ps += last - first_post;
  timing.barrier_ps += placement == BarrierPlacement::kBoth ? 2 * barrier : barrier;
  const fabric::Picos everyone = std::max(barrier_before ? post_all : all_arrived, last) + barrier;
  for (int p : waiting) {
    const fabric::Picos at = placement == BarrierPlacement::kComputeToExchange
                                 ? std::max(post_all, own[static_cast<size_t>(p)])
                                 : everyone;
    core(p).resume(ps_to_cycles(at));
  }
}

nlohmann::ordered_json System::stats_json() const {
  nlohmann::ordered_json j;
  j["processors"] = processors();
  j["chips"] = m_spec.chips;
  j["cores_per_chip"] = m_spec.cores_per_chip;
  j["barrier_placement"] = barrier_placement_name(m_spec.barrier_placement);
  j["seconds"] = seconds();
  int64_t cycles = 0;
  for (const auto& c : m_cores) cycles = std::max(cycles, c->cycles());
  j["cycles"] = cycles;
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
