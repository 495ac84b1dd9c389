#include "core/fifo.h"

#include <fmt/format.h>

#include "core/fault.h"

namespace tessera::core {

ResultFifo::ResultFifo(std::string name, int depth, int words)
    : m_name(std::move(name)),
      m_depth(depth),
      m_words(words),
      m_data(static_cast<size_t>(depth) * words, 0u),
      m_ready(static_cast<size_t>(depth), 0),
      m_free_at(static_cast<size_t>(depth), 0) {}

void ResultFifo::fault_full() const {
  throw UnitFault(
      fmt::format("push into the full {} FIFO ({} results not popped; only a pop could make room)",
                  m_name, m_depth));
}

int64_t ResultFifo::slot_free_at() const {
  if (full()) fault_full();
  return m_free_at[static_cast<size_t>((m_head + m_count) % m_depth)];
}

uint32_t* ResultFifo::push(int64_t ready) {
  if (full()) fault_full();
  const int slot = (m_head + m_count) % m_depth;
  ++m_count;
  m_ready[static_cast<size_t>(slot)] = ready;
  return m_data.data() + static_cast<size_t>(slot) * m_words;
}

int64_t ResultFifo::front_ready() const {
  if (empty())
    throw UnitFault(
        fmt::format("pop from the empty {} FIFO (no result pushed or in flight)", m_name));
  return m_ready[static_cast<size_t>(m_head)];
}

const uint32_t* ResultFifo::pop(int64_t now) {
  front_ready();
  const int slot = m_head;
  m_free_at[static_cast<size_t>(slot)] = now + 1;
  m_head = (m_head + 1) % m_depth;
  --m_count;
  return m_data.data() + static_cast<size_t>(slot) * m_words;
}

}  // namespace tessera::core
