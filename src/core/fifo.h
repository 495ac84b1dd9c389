// ResultFifo: the result FIFO of a pipelined unit (EUP, reduce/permute, transpose), with timing.
//
// Contract:
//   * `depth` entries of `words` 32-bit words, preallocated (no allocation per push or pop).
//   * An entry occupies its slot from its push until one cycle after its pop (the pop's vreg write
//     drains it). A push needs a slot: if all `depth` slots hold results that have not been popped,
//     no waiting can help (only a later pop makes room), so the push faults; if a slot is only
//     draining, the push waits for it (slot_free_at()).
//   * Each entry has the cycle its result becomes ready; pops are in push order and a pop waits for
//     the oldest entry's ready cycle (front_ready()); a pop with no entry at all faults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::core {

class ResultFifo {
 public:
  ResultFifo(std::string name, int depth, int words);

  int depth() const { return m_depth; }
  int count() const { return m_count; }
  bool full() const { return m_count == m_depth; }
  bool empty() const { return m_count == 0; }

  // Earliest cycle the next push may take its slot (throws UnitFault if every slot is unpopped).
  int64_t slot_free_at() const;
  // Reserves the next slot for a result ready at `ready`; returns its words for the caller to
  // fill. Throws UnitFault when full.
  uint32_t* push(int64_t ready);
  // Ready cycle of the oldest entry (throws UnitFault when empty).
  int64_t front_ready() const;
  // Pops the oldest entry at cycle `now`; returns its words (valid until the next push).
  const uint32_t* pop(int64_t now);

 private:
  [[noreturn]] void fault_full() const;
  std::string m_name;
  int m_depth, m_words;
  int m_head = 0, m_count = 0;
  std::vector<uint32_t> m_data;
  std::vector<int64_t> m_ready, m_free_at;
};

}  // namespace tessera::core
