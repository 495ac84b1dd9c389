// How the processes ("ranks") of one distributed System (system.h) talk to each other.
//
// `mpirun -n R tessera ...` spreads the processors of a System over R ranks; every exchange between
// ranks goes through a Communicator. All calls are collective: every rank of the communicator calls
// them in the same order with the same root. A process not started by mpirun uses the
// LocalCommunicator (rank 0 of 1, no MPI), so the single-process build path is unchanged;
// mpi_communicator.h provides the MPI one and installs it as world().
#pragma once

#include <cstdint>
#include <vector>

#include "common/error.h"
#include "common/rank_group.h"

namespace tessera::system {

using tessera::Bytes;

// rank, size, allgather and alltoall: common/rank_group.h.
class Communicator : public RankGroup {
 public:
  // What this rank's collectives sent to other ranks so far: one message per (collective, other
  // rank that receives a payload from this one), and the payload bytes of those messages (the
  // logical exchange; how the MPI library routes it is not counted).
  struct Traffic {
    uint64_t messages = 0;
    uint64_t bytes = 0;
  };

  // The root's `bytes` on every rank (`bytes` is ignored on the others).
  virtual Bytes broadcast(const Bytes& bytes, int root) = 0;
  // A single process sends nothing.
  virtual Traffic traffic() const { return {}; }
};

// One process: rank 0 of 1; every collective returns its own input.
class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<Bytes> allgather(const Bytes& mine) override { return {mine}; }
  std::vector<Bytes> alltoall(const std::vector<Bytes>& to) override;
  Bytes broadcast(const Bytes& bytes, int root) override;
};

// The communicator of this process: the one installed by set_world (the MPI session in the CLI's
// main), else a LocalCommunicator.
Communicator& world();
void set_world(Communicator* comm);  // nullptr: back to the local one
// This process alone (a LocalCommunicator), whatever world() is.
Communicator& local_communicator();

// Collectives on top of the byte interface.
int64_t allreduce_max(Communicator& comm, int64_t value);
int64_t allreduce_min(Communicator& comm, int64_t value);

// The processors rank `rank` of `ranks` simulates: rank_block (common/rank_group.h) of the
// processors.
using ProcessorBlock = RankBlock;
inline ProcessorBlock processor_block(int processors, int ranks, int rank) {
  return rank_block(processors, ranks, rank);
}
inline int rank_of_processor(int p, int processors, int ranks) {
  return rank_of_item(p, processors, ranks);
}

// An error that every rank of a communicator throws identically at the same point of a collective
// computation (a simulated fault gathered from the rank that saw it, a barrier mismatch, a stuck
// exchange). The CLI prints it once (rank 0) and every rank exits normally; any other Error on
// one rank of several aborts all ranks.
class CollectiveError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera::system
