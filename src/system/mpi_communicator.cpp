#include "system/mpi_communicator.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>

#include <fmt/format.h>

namespace tessera::system {

namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(fmt::format("MPI {}", call), std::string(text, static_cast<size_t>(len)));
}

int as_count(size_t n, const char* call) {
  if (n > static_cast<size_t>(INT_MAX))
    throw Error(fmt::format("MPI {}", call),
                fmt::format("{} bytes: over the 2 GiB an MPI count holds", n));
  return static_cast<int>(n);
}

// Displacements of `counts` (int, checked) and the total.
std::vector<int> displacements(const std::vector<int>& counts, const char* call) {
  std::vector<int> displ(counts.size());
  size_t at = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    displ[r] = as_count(at, call);
    at += static_cast<size_t>(counts[r]);
  }
  as_count(at, call);
  return displ;
}

std::vector<Bytes> split(const Bytes& all, const std::vector<int>& counts,
                         const std::vector<int>& displ) {
  std::vector<Bytes> out(counts.size());
  for (size_t r = 0; r < counts.size(); ++r)
    out[r].assign(all.begin() + displ[r], all.begin() + displ[r] + counts[r]);
  return out;
}

}  // namespace

MpiCommunicator::MpiCommunicator() {
  check(MPI_Comm_rank(MPI_COMM_WORLD, &m_rank), "Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &m_size), "Comm_size");
}

std::vector<Bytes> MpiCommunicator::allgather(const Bytes& mine) {
  const int n = as_count(mine.size(), "Allgatherv");
  std::vector<int> counts(static_cast<size_t>(m_size));
  check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "Allgather");
  const std::vector<int> displ = displacements(counts, "Allgatherv");
  Bytes all(static_cast<size_t>(displ.back()) + static_cast<size_t>(counts.back()));
  check(MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displ.data(), MPI_BYTE,
                       MPI_COMM_WORLD),
        "Allgatherv");
  const uint64_t others = static_cast<uint64_t>(m_size - 1);
  if (!mine.empty()) count_sent(others, others * mine.size());
  return split(all, counts, displ);
}

std::vector<Bytes> MpiCommunicator::alltoall(const std::vector<Bytes>& to) {
  TESSERA_CHECK(to.size() == static_cast<size_t>(m_size), "alltoall needs one buffer per rank");
  std::vector<int> send_counts(to.size()), recv_counts(to.size());
  Bytes out;
  for (size_t r = 0; r < to.size(); ++r) {
    send_counts[r] = as_count(to[r].size(), "Alltoallv");
    out.insert(out.end(), to[r].begin(), to[r].end());
  }
  check(
      MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
      "Alltoall");
  const std::vector<int> send_displ = displacements(send_counts, "Alltoallv");
  const std::vector<int> recv_displ = displacements(recv_counts, "Alltoallv");
  Bytes in(static_cast<size_t>(recv_displ.back()) + static_cast<size_t>(recv_counts.back()));
  check(MPI_Alltoallv(out.data(), send_counts.data(), send_displ.data(), MPI_BYTE, in.data(),
                      recv_counts.data(), recv_displ.data(), MPI_BYTE, MPI_COMM_WORLD),
        "Alltoallv");
  for (size_t r = 0; r < to.size(); ++r)
    if (static_cast<int>(r) != m_rank && !to[r].empty()) count_sent(1, to[r].size());
  return split(in, recv_counts, recv_displ);
}

Bytes MpiCommunicator::broadcast(const Bytes& bytes, int root) {
  uint64_t n = m_rank == root ? bytes.size() : 0;
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "Bcast");
  Bytes out = m_rank == root ? bytes : Bytes(n);
  check(MPI_Bcast(out.data(), as_count(n, "Bcast"), MPI_BYTE, root, MPI_COMM_WORLD), "Bcast");
  if (m_rank == root && n > 0)
    count_sent(static_cast<uint64_t>(m_size - 1), static_cast<uint64_t>(m_size - 1) * n);
  return out;
}

void MpiCommunicator::count_sent(uint64_t messages, uint64_t bytes) {
  m_traffic.messages += messages;
  m_traffic.bytes += bytes;
}

bool MpiSession::launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  if (!launched_by_mpirun()) return;
  // A rank waiting in a collective yields its core instead of spinning: the fabric's windows
  // synchronise the ranks thousands of times per exchange, and on a host shared with other jobs a
  // spinning rank takes the time slice the rank it waits for needs. A value set in the
  // environment wins.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  // The ranks exchange through Open MPI's own point-to-point layer (ob1: shared memory on one host,
  // TCP between hosts) rather than UCX, whose start-up probing of the host's devices costs each
  // rank's MPI_Init about a quarter of a second; a cluster whose network wants UCX sets
  // OMPI_MCA_pml=ucx (and OMPI_MCA_osc) in the environment, which wins.
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_osc", "^ucx", 0);
  check(MPI_Init(argc, argv), "Init");
  // Errors come back as return codes (turned into tessera::Error), not as MPI's own abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  m_comm = std::make_unique<MpiCommunicator>();
  set_world(m_comm.get());
}

MpiSession::~MpiSession() {
  if (!m_comm) return;
  set_world(nullptr);
  m_comm.reset();
  MPI_Finalize();
}

void MpiSession::abort(int code) {
  if (m_comm) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace tessera::system
