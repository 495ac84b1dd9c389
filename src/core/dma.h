// The DMA engine: moves words between HBM and vector or scalar memory in the background.
//
// A request is `count` chunks of `chunk` words; chunk i moves src + i*src_stride ..+chunk to
// dst + i*dst_stride (1-D requests: count 1). Addresses are words (vector memory too: DMA sees it
// as a flat word array). Requests are validated when issued (a bad range faults the issuing
// bundle), so completion never faults.
//
// Timing: at most `dma_queue` requests are outstanding; a request issued at cycle t streams its
// bytes once the latency has passed and the HBM data path is free (bandwidth shared in issue
// order): data_start = max(t + dma_latency, end of the previous request's data),
// data_end = data_start + bytes / hbm_bytes_per_cycle (fractional), done = ceil(data_end), where
// bytes = path_bytes() (4 per word, or the encoded size with core.hbm.exponent_encoding.on).
// An isolated request therefore completes at t + latency + ceil(bytes / bandwidth). At `done` the
// data moves (source read and destination written then) and the request's sync flag is
// incremented; bundles issuing at cycle >= done see both.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/spec.h"
#include "core/state.h"

namespace tessera::core {

enum class DmaDir : uint8_t { HbmToVmem, VmemToHbm, HbmToSmem, SmemToHbm };

struct DmaRequest {
  DmaDir dir = DmaDir::HbmToVmem;
  int64_t src = 0, dst = 0;
  int64_t count = 1, chunk = 0;
  int64_t src_stride = 0, dst_stride = 0;
  int flag = 0;  // the tensor-core flag incremented at completion; -1: none
  int64_t issue = 0, done = 0;
  int64_t hbm_bytes = -1;  // bytes the HBM data path carries (core/hbm_encoding.h); < 0: 4 per word
  int64_t words() const { return count * chunk; }
  int64_t path_bytes() const { return hbm_bytes >= 0 ? hbm_bytes : words() * 4; }
};

// Performs the copy (ranges already validated).
void dma_transfer(const DmaRequest& r, ArchState& s);

class DmaEngine {
 public:
  explicit DmaEngine(const CoreSpec& spec);

  // Earliest cycle >= now at which a new request finds room in the queue.
  int64_t queue_ready(int64_t now) const;
  // Queues a request issued at `now` (>= queue_ready(now)); returns its completion cycle.
  int64_t enqueue(DmaRequest r, int64_t now);
  // Completes (moves data, increments flags) every request with done <= now, in order.
  void retire(int64_t now, ArchState& s);
  // Completes everything outstanding; returns the last completion cycle (or -1 if none).
  int64_t retire_all(ArchState& s);
  // The cycle at which flag `flag` (now `value`) reaches `need` through outstanding requests, or
  // -1 if they cannot bring it there.
  int64_t flag_ready(int flag, int64_t value, int64_t need) const;
  int outstanding() const { return m_count; }
  // Shared HBM (units/adam_launcher.h): the end of the data already scheduled on the path, and
  // cycles [from, to) another client (the Adam unit) holds: later requests stream their bytes in
  // the gaps around them. Without reservations the timing is exactly the rule above.
  double data_free() const { return m_data_free; }
  void reserve(int64_t from, int64_t to);

 private:
  const DmaRequest& at(int i) const {
    return m_ring[static_cast<size_t>((m_head + i) % m_ring.size())];
  }
  int m_latency;
  double m_bytes_per_cycle;
  double m_data_free = 0;
  std::map<int64_t, int64_t> m_reserved;  // start -> end, disjoint
  double stream_end(double start, double cycles);
  std::vector<DmaRequest> m_ring;  // capacity dma_queue
  int m_head = 0, m_count = 0;
};

}  // namespace tessera::core
