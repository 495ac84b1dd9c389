// The MPI communicator (OpenMPI) and the process's MPI session.
//
// MpiSession is the one place that calls MPI_Init / MPI_Finalize (the CLI's main holds one). It
// initialises MPI only when the process was started by mpirun (OMPI_COMM_WORLD_SIZE, or PMIX_RANK
// / PMI_RANK for other launchers, in the environment); otherwise it does nothing and world() stays
// the LocalCommunicator, so a plain `tessera ...` makes no MPI call. When active it installs an
// MpiCommunicator over MPI_COMM_WORLD as world() for its lifetime. Ranks waiting in a collective
// yield their core (OMPI_MCA_mpi_yield_when_idle=1), and messages go through Open MPI's ob1
// point-to-point layer, not UCX (OMPI_MCA_pml=ob1, OMPI_MCA_osc=^ucx: UCX's start-up is slow);
// a value the environment sets wins.
#pragma once

#include <memory>

#include "system/communicator.h"

namespace tessera::system {

// MPI_COMM_WORLD. Messages are MPI_BYTE arrays with int counts and displacements: a message or a
// collective's total over 2 GiB is an Error naming the call.
class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();
  int rank() const override { return m_rank; }
  int size() const override { return m_size; }
  std::vector<Bytes> allgather(const Bytes& mine) override;
  std::vector<Bytes> alltoall(const std::vector<Bytes>& to) override;
  Bytes broadcast(const Bytes& bytes, int root) override;
  Traffic traffic() const override { return m_traffic; }

 private:
  void count_sent(uint64_t messages, uint64_t bytes);

  int m_rank = 0, m_size = 1;
  Traffic m_traffic;
};

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool active() const { return m_comm != nullptr; }
  int rank() const { return m_comm ? m_comm->rank() : 0; }
  int size() const { return m_comm ? m_comm->size() : 1; }
  // MPI_Abort(MPI_COMM_WORLD, code) when active (ends every rank), else std::exit(code).
  [[noreturn]] void abort(int code);

  // True when the environment says this process was started by an MPI launcher.
  static bool launched_by_mpirun();

 private:
  std::unique_ptr<MpiCommunicator> m_comm;
};

}  // namespace tessera::system
