// R ranks as threads of one process: a Communicator through shared memory with the collectives'
// semantics of the MPI one (communicator.h), for testing the distributed System without mpirun.
#pragma once

#include <barrier>
#include <functional>
#include <thread>
#include <vector>

#include "system/communicator.h"

namespace tessera::system {

// What the ranks share: one slot per rank and a barrier between writing and reading them.
struct ThreadRanksShared {
  explicit ThreadRanksShared(int n)
      : ranks(n), sync(n), slots(static_cast<size_t>(n)), matrix(static_cast<size_t>(n)) {}
  int ranks;
  std::barrier<> sync;
  std::vector<Bytes> slots;
  std::vector<std::vector<Bytes>> matrix;  // [from][to]
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(ThreadRanksShared& s, int rank) : m_s(s), m_rank(rank) {}
  int rank() const override { return m_rank; }
  int size() const override { return m_s.ranks; }
  std::vector<Bytes> allgather(const Bytes& mine) override {
    m_s.slots[static_cast<size_t>(m_rank)] = mine;
    m_s.sync.arrive_and_wait();
    std::vector<Bytes> all = m_s.slots;
    m_s.sync.arrive_and_wait();
    return all;
  }
  std::vector<Bytes> alltoall(const std::vector<Bytes>& to) override {
    m_s.matrix[static_cast<size_t>(m_rank)] = to;
    m_s.sync.arrive_and_wait();
    std::vector<Bytes> from;
    for (int r = 0; r < m_s.ranks; ++r)
      from.push_back(m_s.matrix[static_cast<size_t>(r)][static_cast<size_t>(m_rank)]);
    m_s.sync.arrive_and_wait();
    return from;
  }
  Bytes broadcast(const Bytes& bytes, int root) override {
    if (m_rank == root) m_s.slots[static_cast<size_t>(root)] = bytes;
    m_s.sync.arrive_and_wait();
    Bytes out = m_s.slots[static_cast<size_t>(root)];
    m_s.sync.arrive_and_wait();
    return out;
  }

 private:
  ThreadRanksShared& m_s;
  int m_rank;
};

// Runs body(comm) on `ranks` threads, each with its own rank; returns each rank's result.
template <typename T>
std::vector<T> on_thread_ranks(int ranks, const std::function<T(Communicator&)>& body) {
  ThreadRanksShared shared(ranks);
  std::vector<T> out(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(shared, r);
      out[static_cast<size_t>(r)] = body(comm);
    });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace tessera::system
