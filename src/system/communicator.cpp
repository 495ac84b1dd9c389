#include "system/communicator.h"

#include <algorithm>

#include "common/byte_codec.h"

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

}  // namespace tessera::system
