// System::host_json (system.h): how the host threads and ranks of a run spent host time.
//
// Each rank sends its record to every rank (allgather): int32 threads, int64 compute phases, double
// phase seconds, per thread double busy, wait and CPU seconds, uint64 messages and bytes sent to
// other ranks (its Communicator::traffic before this gather), then its fabrics' windowed exchange
// phases summed over sync groups (fabric::FabricHostTime): uint64 windows, double busy and wait
// seconds (running its partitions of the fabric; waiting at the windows' ends for the other ranks),
// int64 the process's peak resident memory so far in bytes (getrusage), and the caller's phases as
// a JSON string (empty when none were given).
//
// The achieved speed-up of the parallel phases (`parallel_speedup`): the busy seconds of every
// thread of every rank, summed, over `parallel_phase_seconds`, the wall time the phases took (the
// largest rank's: the ranks run their phases at the same time). It is what the phases would have
// taken one task after another on one thread over what they took: 1 at T = 1 and R = 1, at most
// T x R, less by the phases' own cost (handing tasks out, waking threads); the serial rest of a run
// (compiling, the exchange phase's records and deliveries) is outside it.
#include <algorithm>

#include <sys/resource.h>

#include "common/byte_codec.h"
#include "system/system.h"

namespace tessera::system {

nlohmann::ordered_json System::host_json(const nlohmann::ordered_json& run_phases) const {
  const Communicator::Traffic sent = m_comm->traffic();
  ByteWriter mine;
  mine.put(static_cast<int32_t>(m_pool->threads()));
  mine.put(m_pool->phases());
  mine.put(m_pool->phase_seconds());
  for (const ThreadPool::ThreadTime& t : m_pool->times()) {
    mine.put(t.busy_seconds);
    mine.put(t.wait_seconds);
    mine.put(t.cpu_seconds);
  }
  mine.put(sent.messages);
  mine.put(sent.bytes);
  fabric::FabricHostTime fab;
  for (const auto& f : m_fabrics) {
    fab.windows += f->host_time().windows;
    fab.busy_seconds += f->host_time().busy_seconds;
    fab.wait_seconds += f->host_time().wait_seconds;
  }
  mine.put(fab);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  mine.put(static_cast<int64_t>(usage.ru_maxrss) * 1024);  // Linux: KiB
  mine.put_string(run_phases.is_null() ? std::string() : run_phases.dump());
  nlohmann::ordered_json per_rank = nlohmann::ordered_json::array();
  uint64_t messages = 0, bytes = 0;
  int64_t phases = 0;
  double phase_seconds = 0, busy_seconds = 0;
  nlohmann::ordered_json most = nlohmann::ordered_json::object();  // per phase, the largest rank's
  for (const Bytes& b : m_comm->allgather(mine.bytes())) {
    ByteReader in(b);
    const int threads = in.get<int32_t>();
    phases = std::max(phases, in.get<int64_t>());
    const double rank_phase_seconds = in.get<double>();
    phase_seconds = std::max(phase_seconds, rank_phase_seconds);
    nlohmann::ordered_json busy = nlohmann::ordered_json::array(),
                           wait = nlohmann::ordered_json::array(),
                           cpu = nlohmann::ordered_json::array();
    for (int t = 0; t < threads; ++t) {
      busy.push_back(in.get<double>());
      busy_seconds += busy.back().get<double>();
      wait.push_back(in.get<double>());
      cpu.push_back(in.get<double>());
    }
    const uint64_t m = in.get<uint64_t>(), n = in.get<uint64_t>();
    messages += m;
    bytes += n;
    const auto exchange = in.get<fabric::FabricHostTime>();
    const int64_t peak_rss = in.get<int64_t>();
    const std::string rank_phases = in.get_string();
    per_rank.push_back({{"phase_seconds", rank_phase_seconds},
                        {"thread_busy_seconds", busy},
                        {"thread_wait_seconds", wait},
                        {"thread_cpu_seconds", cpu},
                        {"messages_sent", m},
                        {"bytes_sent", n},
                        {"exchange_windows", exchange.windows},
                        {"exchange_busy_seconds", exchange.busy_seconds},
                        {"exchange_wait_seconds", exchange.wait_seconds},
                        {"peak_rss_bytes", peak_rss}});
    if (rank_phases.empty()) continue;
    const auto p = nlohmann::ordered_json::parse(rank_phases);
    per_rank.back()["phases"] = p;
    for (const auto& [key, seconds] : p.items())
      if (!most.contains(key) || seconds.get<double>() > most[key].get<double>())
        most[key] = seconds;
  }
  nlohmann::ordered_json j;
  j["threads"] = m_pool->threads();
  j["ranks"] = m_comm->size();
  j["compute_phases"] = phases;
  j["messages_between_ranks"] = messages;
  j["bytes_between_ranks"] = bytes;
  j["parallel_phase_seconds"] = phase_seconds;
  j["parallel_speedup"] = phase_seconds > 0 ? busy_seconds / phase_seconds : 1.0;
  j["per_rank"] = per_rank;
  if (!run_phases.is_null()) j["phases"] = most;
  return j;
}

}  // namespace tessera::system
