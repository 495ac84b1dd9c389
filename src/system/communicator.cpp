#include "system/communicator.h"

#include <algorithm>

#include "system/communicator_codec.h"

namespace tessera::system {

std::vector<Bytes> LocalCommunicator::alltoall(const std::vector<Bytes>& to) {
  TESSERA_CHECK(to.size() == 1, "alltoall needs one buffer per rank");
  return to;
}

Bytes LocalCommunicator::broadcast(const Bytes& bytes, int root) {
  TESSERA_CHECK(root == 0, "broadcast root outside the communicator");
  return bytes;
}

namespace {
Communicator* g_world = nullptr;
}  // namespace

Communicator& local_communicator() {
  static LocalCommunicator local;
  return local;
}

Communicator& world() {
  return g_world != nullptr ? *g_world : local_communicator();
}

void set_world(Communicator* comm) {
  g_world = comm;
}

namespace {
std::vector<int64_t> allgather_one(Communicator& comm, int64_t value) {
  ByteWriter w;
  w.put(value);
  std::vector<int64_t> out;
  for (const Bytes& b : comm.allgather(w.bytes())) {
    ByteReader r(b);
    out.push_back(r.get<int64_t>());
  }
  return out;
}
}  // namespace

int64_t allreduce_max(Communicator& comm, int64_t value) {
  const std::vector<int64_t> all = allgather_one(comm, value);
  return *std::max_element(all.begin(), all.end());
}

int64_t allreduce_min(Communicator& comm, int64_t value) {
  const std::vector<int64_t> all = allgather_one(comm, value);
  return *std::min_element(all.begin(), all.end());
}

ProcessorBlock processor_block(int processors, int ranks, int rank) {
  TESSERA_CHECK(ranks >= 1 && rank >= 0 && rank < ranks && processors >= 0, "bad rank layout");
  const int base = processors / ranks, extra = processors % ranks;
  return {rank * base + std::min(rank, extra), base + (rank < extra ? 1 : 0)};
}

int rank_of_processor(int p, int processors, int ranks) {
  const int base = processors / ranks, extra = processors % ranks;
  const int big = extra * (base + 1);  // processors held by the ranks with one more
  if (p < big) return p / (base + 1);
  return extra + (p - big) / base;
}

}  // namespace tessera::system
