// MPI scale-out (system/system.h, system/communicator.h): the built `tessera` run under
// `mpirun -n R` for R = 1, 2, 3, 4 prints the same JSON (values checked against the host
// reference, cycle counts, simulated times, fabric statistics) as without mpirun; only the host
// timing fields and mpi_ranks differ. `train --chips` writes the same report (mlp, and gpt on the
// fortunes corpus), and its checkpoint written under `mpirun -n 2` resumes under `mpirun -n 3` to
// the uninterrupted run's report.
// Skipped when `tessera` has not been built in this build tree.
//
// Environment of each mpirun: OMPI_ALLOW_RUN_AS_ROOT{,_CONFIRM}=1 (CI runs as root),
// --oversubscribe (more ranks than cores), --mca btl self,vader (shared memory only: no network),
// ASAN_OPTIONS+=detect_leaks=0 (OpenMPI's own allocations at MPI_Init are never freed, so
// LeakSanitizer would fail every sanitizer run; address and UB checks stay on), a session
// directory of its own (OMPI_MCA_orte_tmpdir_base: mpiruns started at the same moment by
// concurrent tests otherwise race to create the same one in /tmp and one fails with "File
// exists"), and `timeout` so a hang fails the test instead of blocking the suite.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "support/temp_dir.h"

namespace {

std::string binary() {
  return std::string(TESSERA_BINARY_DIR) + "/src/cli/tessera";
}

struct Result {
  int status = 0;
  std::string out, err;
};

Result mpirun(int ranks, const std::string& args) {
  const std::string err_file = std::string(TESSERA_BINARY_DIR) + "/mpi_test_stderr_" +
                               std::to_string(ranks) + "_" + std::to_string(::getpid()) + ".txt";
  const std::filesystem::path session = std::string(TESSERA_BINARY_DIR) + "/mpi_test_session_" +
                                        std::to_string(ranks) + "_" + std::to_string(::getpid());
  std::filesystem::create_directories(session);
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader "
      "OMPI_MCA_orte_tmpdir_base=" +
      session.string() +
      " "
      "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout -k 5 120 mpirun -n " +
      std::to_string(ranks) + " --oversubscribe " + binary() + " " + args + " 2>" + err_file;
  Result r;
  FILE* f = popen(cmd.c_str(), "r");
  char buf[4096];
  while (f != nullptr && std::fgets(buf, sizeof buf, f) != nullptr) r.out += buf;
  const int raw = f != nullptr ? pclose(f) : -1;
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (FILE* e = std::fopen(err_file.c_str(), "r")) {
    while (std::fgets(buf, sizeof buf, e) != nullptr) r.err += buf;
    std::fclose(e);
  }
  std::filesystem::remove(err_file);
  std::filesystem::remove_all(session);
  return r;
}

// The JSON without the fields that measure the host or name the rank count.
nlohmann::json simulated_part(const Result& r, int ranks) {
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("mpi_ranks").get<int>(), ranks);
  nlohmann::json k = j;
  for (const char* key :
       {"host_seconds", "host_wall_seconds", "packets_per_host_second", "mpi_ranks", "host"})
    k.erase(key);
  return k;
}

class MpiCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(binary())) GTEST_SKIP() << "tessera not built";
  }
};

void expect_same_for_ranks(const std::string& args, std::initializer_list<int> ranks) {
  const Result one = mpirun(1, args);
  ASSERT_EQ(one.status, 0) << one.err;
  const nlohmann::json want = simulated_part(one, 1);
  for (int r : ranks) {
    const Result got = mpirun(r, args);
    ASSERT_EQ(got.status, 0) << "ranks " << r << ": " << got.err;
    EXPECT_EQ(simulated_part(got, r), want) << "ranks " << r;
  }
}

TEST_F(MpiCli, AllReduceUnderLossIsBitIdenticalForOneTwoThreeFourRanks) {
  // 8 processors (4 chips x 2 cores), 5% loss: values equal the host reference on every rank
  // (--check), and cycles, times, retransmissions and packets equal the one-rank run.
  expect_same_for_ranks(
      "bench allreduce --chips 4 --cores-per-chip 2 --bytes 4004 --topology ring --loss 0.05 "
      "--seed 3 --check --json",
      {2, 3, 4});
}

// `args --threads T` under every rank count R in 1..4 and T in {1, 2} prints the JSON of R = 1,
// T = 1 but for the host fields; its "host" object names T and R.
void expect_same_for_ranks_and_threads(const std::string& args) {
  const Result one = mpirun(1, args + " --threads 1");
  ASSERT_EQ(one.status, 0) << one.err;
  const nlohmann::json want = simulated_part(one, 1);
  for (int r : {1, 2, 3, 4})
    for (int t : {1, 2}) {
      const Result got = mpirun(r, args + " --threads " + std::to_string(t));
      ASSERT_EQ(got.status, 0) << "ranks " << r << " threads " << t << ": " << got.err;
      EXPECT_EQ(simulated_part(got, r), want) << "ranks " << r << " threads " << t;
      const nlohmann::json host = nlohmann::json::parse(got.out).at("host");
      EXPECT_EQ(host.at("threads"), t);
      EXPECT_EQ(host.at("ranks"), r);
      EXPECT_EQ(host.at("per_rank").size(), static_cast<size_t>(r));
      EXPECT_EQ(host.at("messages_between_ranks").get<uint64_t>() > 0, r > 1) << "ranks " << r;
      for (const nlohmann::json& rank : host.at("per_rank")) {  // the fabric split over the ranks
        EXPECT_EQ(rank.at("exchange_windows").get<uint64_t>() > 0, r > 1 || t > 1);
        EXPECT_GE(rank.at("exchange_busy_seconds").get<double>(), 0);
        EXPECT_GE(rank.at("exchange_wait_seconds").get<double>(), 0);
        EXPECT_GT(rank.at("peak_rss_bytes").get<int64_t>(), 0);
      }
    }
}

TEST_F(MpiCli, RingAllReduceUnderLossIsBitIdenticalForEveryRankAndThreadCount) {
  expect_same_for_ranks_and_threads(
      "bench allreduce --chips 4 --cores-per-chip 2 --bytes 4004 --topology ring --loss 0.05 "
      "--seed 3 --check --json");
}

TEST_F(MpiCli, TorusAllReduceUnderLossIsBitIdenticalForEveryRankAndThreadCount) {
  expect_same_for_ranks_and_threads(
      "bench allreduce --chips 4 --cores-per-chip 2 --bytes 4096 --topology torus2d --algorithm "
      "torus --loss 0.05 --seed 4 --check --json");
}

TEST_F(MpiCli, MoreRanksThanProcessorsLeavesSomeRanksIdleAndChangesNothing) {
  expect_same_for_ranks("bench allreduce --chips 3 --bytes 404 --topology line --check --json",
                        {4});
}

// `json` without any "host_seconds" or "host" member, at any depth (host CPU time differs between
// runs).
nlohmann::json without_host_seconds(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("host_seconds");
    j.erase("host");
    for (auto& [k, v] : j.items()) v = without_host_seconds(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = without_host_seconds(v);
  }
  return j;
}

// `tessera train <args> --report F` under `mpirun -n ranks`: the report without host_seconds.
nlohmann::json train_report(int ranks, const std::string& args) {
  const std::string report = std::string(TESSERA_BINARY_DIR) + "/mpi_test_train_" +
                             std::to_string(ranks) + "_" + std::to_string(::getpid()) + ".json";
  const Result r = mpirun(ranks, "train " + args + " --report " + report);
  EXPECT_EQ(r.status, 0) << r.err;
  std::ifstream in(report);
  if (!in) return nullptr;
  const nlohmann::json got = without_host_seconds(nlohmann::json::parse(in));
  in.close();
  std::filesystem::remove(report);
  return got;
}

// `train <args><T>` (args ending in --threads) for R in `ranks` (default 1, 2, 3) x T in {1, 2}
// threads: every report equals the R = 1, T = 1 one, which is returned (null when it was not
// written).
nlohmann::json expect_train_report_same_for_ranks_and_threads(const std::string& args,
                                                              std::initializer_list<int> ranks = {
                                                                  1, 2, 3}) {
  const nlohmann::json want = train_report(1, args + "1");
  if (want.is_null()) return want;
  for (int r : ranks)
    for (int t : {1, 2}) {
      if (r == 1 && t == 1) continue;
      EXPECT_EQ(train_report(r, args + std::to_string(t)), want)
          << "ranks " << r << " threads " << t;
    }
  return want;
}

TEST_F(MpiCli, DataParallelTrainingReportIsBitIdenticalForOneAndThreeRanks) {
  // 4 processors (2 chips x 2 cores) over 3 ranks: losses, accuracies, simulated times, exchange
  // and link figures and the resolved config equal the one-rank report.
  const std::string args =
      "--chips 2 --cores-per-chip 2 --batch 8 --steps 2 --epochs 1 --optimizer sgd --lr 0.05";
  const nlohmann::json want = train_report(1, args);
  ASSERT_FALSE(want.is_null());
  EXPECT_EQ(want.at("processors"), 4);
  EXPECT_EQ(train_report(3, args), want) << "3 ranks";
}

TEST_F(MpiCli, DataParallelTrainingReportIsBitIdenticalForEveryRankAndThreadCount) {
  // 4 processors (2 chips x 2 cores) on R in {1, 2, 3} ranks x T in {1, 2}
  // threads: every figure but the host's equals the R = 1, T = 1 report.
  const std::string args =
      "--chips 2 --cores-per-chip 2 --batch 8 --steps 3 --epochs 1 --optimizer adam --lr 1e-3 "
      "--set system.link.loss_rate=0.05 --threads ";
  ASSERT_FALSE(expect_train_report_same_for_ranks_and_threads(args).is_null());
}

TEST_F(MpiCli, BoardOfFourChipsTrainsTwentyStepsBitIdenticallyOnOneToFourRanksAndTwoThreads) {
  // 8 processors (4 chips x 2 cores, configs/board4.json) for 20 steps: the ranks split the
  // fabric's chips (fabric/engine.h "Ranks"), and every figure but the host's equals the R = 1,
  // T = 1 report for R in 1..4 x T in {1, 2}.
  const std::string args = "--chips 4 --config " + std::string(TESSERA_SOURCE_DIR) +
                           "/configs/board4.json --epochs 1 --steps 20 --threads ";
  const nlohmann::json want = expect_train_report_same_for_ranks_and_threads(args, {1, 2, 3, 4});
  ASSERT_FALSE(want.is_null());
  EXPECT_EQ(want.at("processors"), 8);
}

TEST_F(MpiCli, DataParallelGptReportIsBitIdenticalForEveryRankAndThreadCount) {
  // The gpt decoder (d 32, 2 heads, 1 block, context 16) on the fortunes corpus, 8 windows over 4
  // processors (2 chips x 2 cores) on R in {1, 2, 3} ranks x T in {1, 2} threads: losses,
  // validation loss, tokens per simulated second, exchange and link figures equal the R = 1, T = 1
  // report.
  if (!std::filesystem::exists("/usr/share/games/fortunes"))
    GTEST_SKIP() << "fortunes not installed";
  const std::string args =
      "--model gpt --d-model 32 --heads 2 --layers 1 --context 16 --chips 2 --cores-per-chip 2 "
      "--batch 8 --steps 2 --optimizer adam --lr 1e-3 --threads ";
  const nlohmann::json want = expect_train_report_same_for_ranks_and_threads(args);
  ASSERT_FALSE(want.is_null());
  EXPECT_EQ(want.at("model"), "gpt");
  EXPECT_EQ(want.at("processors"), 4);
  EXPECT_GT(want.at("epochs").at(0).at("tokens_per_sim_second").get<double>(), 0);
}

TEST_F(MpiCli, CheckpointWrittenOnTwoRanksResumesOnThreeToTheUninterruptedReport) {
  // Epoch 1 on 2 ranks writes ck/ckpt-0000000002.tsck (rank 0 writes); 3 ranks resume it for
  // epoch 2. Every report figure but host_seconds (losses, accuracies, simulated times, optimizer,
  // system and link statistics) equals the one-rank run of both epochs; only resumed_from differs.
  const std::string args =
      "--batch 8 --steps 2 --optimizer adam --lr 1e-3 --chips 2 --cores-per-chip 2";
  tessera::testing::TempDir dir;
  const std::string ck = dir.file("ck");
  const Result first = mpirun(2, "train " + args + " --epochs 1 --checkpoint-dir " + ck);
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_TRUE(std::filesystem::exists(ck + "/ckpt-0000000002.tsck"));
  nlohmann::json resumed =
      train_report(3, args + " --epochs 2 --checkpoint-dir " + ck + " --resume");
  nlohmann::json full = train_report(1, args + " --epochs 2");
  ASSERT_FALSE(resumed.is_null());
  ASSERT_FALSE(full.is_null());
  EXPECT_EQ(resumed.at("resumed_from"), ck + "/ckpt-0000000002.tsck");
  EXPECT_EQ(full.at("resumed_from"), "");
  EXPECT_EQ(full.at("epochs").size(), 2u);
  resumed.erase("resumed_from");
  full.erase("resumed_from");
  EXPECT_EQ(resumed, full);
}

TEST_F(MpiCli, AnErrorOnEveryRankEndsTheRunWithItsMessage) {
  const Result r = mpirun(2, "bench allreduce --chips 4 --bytes 6 --json");
  EXPECT_NE(r.status, 0);
  // Both ranks fail; mpirun ends the job when the first one exits, so which rank's line reaches
  // stderr first is a race: either rank's message, with its rank named, is the contract.
  const bool rank0 =
      r.err.find("tessera: error (rank 0 of 2): --bytes: 6: a positive multiple of 4") !=
      std::string::npos;
  const bool rank1 =
      r.err.find("tessera: error (rank 1 of 2): --bytes: 6: a positive multiple of 4") !=
      std::string::npos;
  EXPECT_TRUE(rank0 || rank1) << r.err;
}

TEST_F(MpiCli, DlrmWithShardedTablesReportsTheSameOnOneTwoAndFourRanks) {
  // 4 processors (2 chips x 2 cores), the tables sharded over them, the fabric's simulation split
  // over the ranks: losses, AUC, cycles, sparse-core figures and exchange bytes equal the one-rank
  // report.
  const std::string args =
      "--model dlrm --chips 2 --cores-per-chip 2 --rows 4096 --steps 3 --batch 64 --test 256 "
      "--threads 1";
  const nlohmann::json want = train_report(1, args);
  ASSERT_FALSE(want.is_null());
  EXPECT_EQ(want.at("processors"), 4);
  EXPECT_GT(want.at("chip").at("exchange").at("grad_bytes"), 0);
  for (int r : {2, 4}) EXPECT_EQ(train_report(r, args), want) << r << " ranks";
}

}  // namespace
