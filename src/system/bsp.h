// The BSP schedule shared by the timed system (system.h) and the functional one
// (functional_system.h): which processors form a sync group, and the delivery of a superstep's
// sends in the order that defines the values (core/exchange.h: per receiver, by source processor,
// then program order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/exchange.h"

namespace tessera::system {

// Sync groups: consecutive blocks of `group_size` processors (0 = one group of all). Each group
// runs its own supersteps asynchronously to the others; a send may not leave its group.
struct SyncGroups {
  SyncGroups(int processors, int group_size);
  int count() const { return static_cast<int>(m_first.size()); }
  int first(int g) const { return m_first[g]; }
  int size(int g) const { return m_size[g]; }
  int group_of(int p) const;

 private:
  std::vector<int> m_first, m_size;
  int m_group_size;
};

// One send of a superstep, with its source and its position in the source's program order.
struct Send {
  int src = 0;
  uint32_t seq = 0;
  core::OutboundSend send;
};

// Collects the outboxes of group g's processors (clearing them) in delivery order: by receiver,
// then source, then program order. `outbox(p)` returns processor p's outbox. A send to a processor
// outside the group throws Error naming the source processor.
template <typename OutboxOf>
std::vector<Send> collect_sends(const SyncGroups& groups, int g, int64_t superstep,
                                OutboxOf&& outbox);

// The error for a group whose processors disagree: some halted, others wait at a barrier.
[[noreturn]] void fault_barrier_mismatch(int superstep, const std::vector<int>& halted,
                                         const std::vector<int>& waiting);

// The end of superstep `superstep`'s compute phase in group g, given whether each of its processors
// halted (halted[i] for processor first(g) + i): the processors waiting at the barrier, in order;
// empty when every one halted (the group is done). Some halted while others wait:
// fault_barrier_mismatch. Shared by run_group below and the timed System's distributed loop.
std::vector<int> waiting_processors(const SyncGroups& groups, int g, int64_t superstep,
                                    const std::vector<char>& halted);

// "processor P (chip C, core K)" for errors.
std::string processor_name(int p, int cores_per_chip);

void check_group_target(const SyncGroups& groups, int g, int src, uint32_t dst, int64_t superstep);
void sort_for_delivery(std::vector<Send>& sends);

template <typename OutboxOf>
std::vector<Send> collect_sends(const SyncGroups& groups, int g, int64_t superstep,
                                OutboxOf&& outbox) {
  std::vector<Send> out;
  for (int p = groups.first(g); p < groups.first(g) + groups.size(g); ++p) {
    std::vector<core::OutboundSend>& box = outbox(p);
    for (size_t i = 0; i < box.size(); ++i) {
      check_group_target(groups, g, p, box[i].dst_proc, superstep);
      out.push_back(Send{p, static_cast<uint32_t>(i), std::move(box[i])});
    }
    box.clear();
  }
  sort_for_delivery(out);
  return out;
}

// Runs sync group g to completion: `run_to_sync(p)` runs processor p's core to its next sync (true)
// or halt (false; never called again for p); `exchange(superstep, waiting)` then runs the exchange
// phase for the waiting processors and resumes them. A processor fault is rethrown naming the
// processor. Returns the number of supersteps.
template <typename RunToSync, typename Exchange>
int64_t run_group(const SyncGroups& groups, int g, int cores_per_chip, RunToSync&& run_to_sync,
                  Exchange&& exchange) {
  std::vector<char> done(static_cast<size_t>(groups.size(g)), 0);
  for (int64_t step = 0;; ++step) {
    for (int i = 0; i < groups.size(g); ++i) {
      const int p = groups.first(g) + i;
      if (done[i]) continue;
      try {
        done[i] = run_to_sync(p) ? 0 : 1;
      } catch (const Error& e) {
        throw Error(processor_name(p, cores_per_chip) + ": " + e.where(), e.why());
      }
    }
    const std::vector<int> waiting = waiting_processors(groups, g, step, done);
    if (waiting.empty()) return step;
    exchange(step, waiting);
  }
}

}  // namespace tessera::system
