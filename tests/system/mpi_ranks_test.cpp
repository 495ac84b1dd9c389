// The distributed System (system.h "Distribution") with R ranks in one process: each rank is a
// thread with its own System over a ThreadCommunicator (the same collectives as the MPI one,
// through shared memory). Whatever R (dividing the processors or not, more ranks than processors),
// values, cycle counts, end time and statistics equal the one-rank run, under packet loss too;
// errors are thrown identically by every rank. tests/system/mpi_test.cpp does the same through
// mpirun and the CLI.
#include <algorithm>
#include <bit>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/byte_codec.h"
#include "compiler/collectives.h"
#include "isa/assembler.h"
#include "support/error_of.h"
#include "system/mpi_thread_communicator.h"
#include "system/small_spec.h"
#include "system/system.h"

namespace tessera::system {
namespace {

SystemSpec ring(int chips, int cores, double loss) {
  SystemSpec s;
  s.chips = chips;
  s.chips_per_board = chips;
  s.cores_per_chip = cores;
  s.topology = Topology::kRing;
  s.packet_payload_bytes = 64;
  s.loss_rate = loss;
  return s;
}

compiler::CollectiveSpec allreduce(int n) {
  compiler::CollectiveSpec c;
  c.processors = n;
  c.words = 301;
  c.base = 8;
  c.directions = 2;
  return c;
}

uint32_t input_word(int p, uint32_t i) {
  return std::bit_cast<uint32_t>(static_cast<float>(p * 1000 + i) * 0.37f);
}

// Everything a run shows, gathered on every rank (so each rank's copy can be compared).
struct Outcome {
  std::vector<std::vector<uint32_t>> vectors;
  int64_t cycles = 0;
  fabric::Picos end = 0;
  std::string stats, error;
  bool operator==(const Outcome&) const = default;
};

Outcome run_rank(Communicator& comm, const SystemSpec& spec, const isa::Program& image,
                 const compiler::CollectiveSpec& c) {
  Outcome o;
  SystemOptions opt;
  opt.comm = &comm;
  opt.seed = 7;
  System sys(small_spec(), spec, image, opt);
  for (int p = 0; p < c.processors; ++p)
    if (sys.is_local(p))
      for (uint32_t i = 0; i < c.words; ++i)
        sys.core(p).host_state().vmem[c.base + i] = input_word(p, i);
  o.error = testing::error_of([&] { sys.run(); });
  if (o.error != "(no error)") return o;
  for (int p = 0; p < c.processors; ++p) {
    const Bytes b = sys.from_processor(p, [&](const core::Core& k) {
      ByteWriter w;
      w.append(k.state().vmem.data() + c.base, c.words * sizeof(uint32_t));
      w.put(k.cycles());
      return w.bytes();
    });
    ByteReader in(b);
    std::vector<uint32_t> v(c.words);
    in.read(v.data(), v.size() * sizeof(uint32_t));
    v.push_back(static_cast<uint32_t>(in.get<int64_t>()));  // the core's own cycle count too
    o.vectors.push_back(std::move(v));
  }
  o.cycles = sys.cycles();
  o.end = sys.end_ps();
  o.stats = sys.stats_json().dump();
  return o;
}

std::vector<Outcome> run_ranks(int ranks, const SystemSpec& spec, const isa::Program& image,
                               const compiler::CollectiveSpec& c) {
  return on_thread_ranks<Outcome>(
      ranks, [&](Communicator& comm) { return run_rank(comm, spec, image, c); });
}

// Every processor's vector in `o` equals the host reference of `c` on the input_word inputs.
void expect_reference(const Outcome& o, const compiler::CollectiveSpec& c) {
  std::vector<std::vector<uint32_t>> inputs;
  for (int p = 0; p < c.processors; ++p) {
    std::vector<uint32_t> v(c.words);
    for (uint32_t i = 0; i < c.words; ++i) v[i] = input_word(p, i);
    inputs.push_back(std::move(v));
  }
  const std::vector<uint32_t> want = compiler::collective_reference(c, inputs);
  for (int p = 0; p < c.processors; ++p)
    EXPECT_TRUE(std::equal(want.begin(), want.end(), o.vectors[static_cast<size_t>(p)].begin()))
        << p;
}

TEST(SystemRanks, AllReduceIsBitIdenticalForAnyNumberOfRanks) {
  const compiler::CollectiveSpec c = allreduce(8);
  const SystemSpec spec = ring(4, 2, 0.05);
  const isa::Program image = compiler::collective_program(c);
  const std::vector<Outcome> one = run_ranks(1, spec, image, c);
  ASSERT_EQ(one[0].error, "(no error)");
  expect_reference(one[0], c);
  for (int ranks : {2, 3, 4, 8, 11}) {
    const std::vector<Outcome> got = run_ranks(ranks, spec, image, c);
    for (int r = 0; r < ranks; ++r)
      EXPECT_EQ(got[static_cast<size_t>(r)], one[0]) << ranks << " ranks, rank " << r;
  }
}

TEST(SystemRanks, TorusAllReduceIsBitIdenticalForOneTwoAndFourRanks) {
  // 2 x 2 torus of chips, 2 cores each: grid 2 x 2 x 2 (system/collective_grid.h), 5% loss.
  compiler::CollectiveSpec c = allreduce(8);
  c.algorithm = compiler::CollectiveAlgorithm::kTorus;
  c.grid = {2, 2, 2};
  SystemSpec spec = ring(4, 2, 0.05);
  spec.topology = Topology::kTorus2d;
  spec.dims_x = spec.dims_y = 2;
  const isa::Program image = compiler::collective_program(c);
  const std::vector<Outcome> one = run_ranks(1, spec, image, c);
  ASSERT_EQ(one[0].error, "(no error)");
  expect_reference(one[0], c);
  for (int ranks : {2, 4}) {
    const std::vector<Outcome> got = run_ranks(ranks, spec, image, c);
    for (int r = 0; r < ranks; ++r)
      EXPECT_EQ(got[static_cast<size_t>(r)], one[0]) << ranks << " ranks, rank " << r;
  }
}

TEST(SystemRanks, bad_a_fault_on_another_ranks_processor_is_thrown_by_every_rank) {
  // Processor 5 (rank 2 of 3, rank 1 of 2) sends to processor 9 of 8.
  const isa::Program image = isa::assemble(
      "smfsr s1, %pid ;; sli s2, 5\n"
      "sli s3, 9 ;; sli s4, 1\n"
      "bne s1, s2, ok\n"
      "xsend s4, s4, s4, s3\n"
      "ok:\n"
      "sync\n"
      "halt\n");
  const compiler::CollectiveSpec c = allreduce(8);
  const std::vector<Outcome> one = run_ranks(1, ring(4, 2, 0), image, c);
  EXPECT_EQ(one[0].error,
            "processor 5 (chip 2, core 1): simulated fault at pc 3 cycle 3 [xsend s4, s4, s4, s3]: "
            "xsend: processor 9 "
            "does not exist (processors 0..7)");
  for (int ranks : {2, 3})
    for (const Outcome& o : run_ranks(ranks, ring(4, 2, 0), image, c))
      EXPECT_EQ(o.error, one[0].error) << ranks;
}

}  // namespace
}  // namespace tessera::system
