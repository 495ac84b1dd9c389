#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "common/error.h"
#include "mapper/generators.h"
#include "mapper/gradient_check.h"
#include "mapper/placers.h"
#include "mapper/rl_placer.h"

namespace tessera::mapper {
namespace {

CoreProblem star_problem() {
  // Node 0 interacts most (weight 6), then 1 (4), then 2 (3), 3 (1).
  LogicalGraph g;
  for (int i = 0; i < 4; ++i) g.add_node({std::to_string(i)});
  g.add_edge(0, 1, 3.0);
  g.add_edge(0, 2, 2.0);
  g.add_edge(0, 3, 1.0);
  g.add_edge(1, 2, 1.0);
  return make_core_problem(g, 3, 3);
}

TEST(ConflictRule, HighestPriorityKeepsTheCoreAndLosersTakeTheNearestFreeCore) {
  CoreProblem pb = star_problem();
  auto prio = node_priority(pb);
  EXPECT_EQ(prio, (std::vector<double>{6, 4, 3, 1}));
  // All four nodes want the centre core 4. Node 0 keeps it; node 1 takes the nearest free core to
  // 4 (distance 1, lowest id: 1), node 2 the next (3), node 3 the next (5).
  EXPECT_EQ(resolve_conflicts(pb, {4, 4, 4, 4}, prio), (std::vector<int>{4, 1, 3, 5}));
}

TEST(ConflictRule, AWinnerKeepsItsCoreEvenIfAHigherPriorityLoserIsNearer) {
  CoreProblem pb = star_problem();
  auto prio = node_priority(pb);
  // Nodes 0 and 1 want core 0; node 3 (lowest priority) wants core 1 alone and keeps it, so node 1
  // (loser) goes to the next nearest free core to 0, which is 3.
  EXPECT_EQ(resolve_conflicts(pb, {0, 0, 8, 1}, prio), (std::vector<int>{0, 3, 8, 1}));
}

// The network's backward pass for `outputs` outputs per node.
void check_backward(int outputs) {
  CoreProblem pb = make_core_problem(gen_random_dag(20, 4, 2, 7), 5, 5);
  PolicyInput in = make_policy_input(pb);
  Policy pol(6, 1.0, 2.0, outputs);
  pol.init(3);
  Eigen::MatrixXd gmu(pb.n(), outputs);
  gmu.col(0) = Eigen::VectorXd::LinSpaced(pb.n(), -1.0, 1.0);
  if (outputs == 2)
    for (int i = 0; i < pb.n(); ++i) gmu(i, 1) = std::cos(0.7 * i);
  PolicyTape tape;
  Eigen::MatrixXd mu = pol.forward(in, &tape);
  ASSERT_EQ(mu.rows(), pb.n());
  ASSERT_EQ(mu.cols(), outputs);
  Eigen::VectorXd g = pol.backward(in, tape, gmu);
  expect_gradient_matches(
      pol, g, [&] { return gmu.cwiseProduct(pol.forward(in)).sum(); }, 7, 1e-6);
}

TEST(Policy, BackwardMatchesFiniteDifferences) {
  check_backward(1);
}

TEST(Policy, BackwardMatchesFiniteDifferencesWithTwoOutputs) {
  check_backward(2);
}

// The PPO objective's gradient through the discretised Gaussian over `outputs`-dimensional
// positions (the Hilbert line or the mesh).
void check_ppo_gradient(int outputs) {
  CoreProblem pb = make_core_problem(gen_random_dag(16, 4, 2, 9), 4, 4);
  PolicyInput in = make_policy_input(pb);
  Policy pol(5, 1.0, 2.0, outputs);
  pol.init(11);
  // Old policy = a perturbed copy, so ratios spread on both sides of the clip range.
  Policy old = pol;
  Eigen::VectorXd po = old.params();
  for (int k = 0; k < po.size(); ++k) po[k] += 0.3 * std::sin(1.7 * k);
  old.set_params(po);
  Eigen::MatrixXd mu_old = old.forward(in);
  std::vector<PpoItem> batch;
  const Positions positions =
      outputs == 1 ? line_positions(16, old.bound()) : make_positions(pb, 2, old.bound());
  for (double adv : {1.3, -0.7}) {
    PpoItem it{.input = &in, .advantage = adv, .positions = &positions};
    for (int v = 0; v < pb.n(); ++v) {
      int a = (v * 5 + (adv > 0 ? 1 : 3)) % 16;
      it.actions.push_back(a);
      it.old_logp.push_back(position_log_probs(positions, mu_old.row(v), old.sigma_steps())[a]);
      if (adv < 0) it.node_advantage.push_back(std::cos(2.3 * v));  // per-decision advantages
    }
    batch.push_back(it);
  }
  Eigen::VectorXd g;
  ppo_objective(pol, batch, 0.2, &g);
  const int checked = expect_gradient_matches(
      pol, g, [&] { return ppo_objective(pol, batch, 0.2, nullptr); }, 3, 1e-5);
  EXPECT_GT(checked, 10);
  EXPECT_GT(g.norm(), 0.0);
}

TEST(Ppo, ClippedObjectiveGradientMatchesFiniteDifferences) {
  check_ppo_gradient(1);
}

TEST(Ppo, ClippedObjectiveGradientMatchesFiniteDifferencesOnTheMesh) {
  check_ppo_gradient(2);
}

TEST(Ppo, ObjectiveIsClipped) {
  // One decision: with A > 0 the objective cannot exceed (1 + eps) * A however likely the action.
  CoreProblem pb = make_core_problem(gen_random(4, 2.0, 1), 2, 2);
  PolicyInput in = make_policy_input(pb);
  Policy pol(4);
  pol.init(1);
  const Positions line = line_positions(4, pol.bound());
  PpoItem it{.input = &in,
             .actions = {0, 0, 0, 0},
             .old_logp = {-50.0, -50.0, -50.0, -50.0},
             .advantage = 2.0,
             .positions = &line};
  EXPECT_DOUBLE_EQ(ppo_objective(pol, {it}, 0.2, nullptr), 1.2 * 2.0);
}

TEST(Policy, SaveLoadRoundTripsAndBadFilesAreRejected_bad) {
  Policy pol(8);
  pol.init(5);
  std::string path = std::string(TESSERA_BINARY_DIR) + "/mapper_policy_test.bin";
  pol.save(path);
  EXPECT_EQ(Policy::load(path).params(), pol.params());
  {
    std::ofstream f(path, std::ios::binary);
    f << "NOTAPOLICYFILE";
  }
  try {
    Policy::load(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.why(), "not a tessera policy file (bad magic)");
  }
  std::remove(path.c_str());
}

TEST(Policy, EveryTruncationAndTrailingBytesAreNamedErrors_bad) {
  Policy pol(2);
  pol.init(3);
  const std::string bytes = pol.encode();
  EXPECT_EQ(Policy::decode(bytes, "p.bin").params(), pol.params());
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      Policy::decode(std::string_view(bytes).substr(0, n), "p.bin");
      FAIL() << n << " bytes accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.where().rfind("p.bin: offset ", 0), 0u) << e.what();
    }
  }
  try {
    Policy::decode(bytes.substr(0, 50), "p.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "p.bin: offset 50: truncated file (reading parameters): 50 bytes, 35 parameters "
                 "need 320");
  }
  try {
    Policy::decode(bytes + "xyz", "p.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.bin: offset 320: 3 bytes after the last parameter");
  }
}

TEST(Policy, ReadAndWriteErrorsNameTheFileAndTheReason_bad) {
  try {
    Policy::load("/nonexistent-dir/p.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent-dir/p.bin: cannot open policy file");
  }
  try {
    Policy::load("/");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/: is a directory, not a file");
  }
  try {
    Policy(2).save("/nonexistent-dir/p.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent-dir/p.bin: cannot open policy file for writing: No such file or "
                 "directory");
  }
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    Policy(2).save("/dev/full");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/dev/full: cannot write policy file: No space left on device");
  }
}

TEST(Training, IsDeterministic) {
  std::vector<CoreProblem> graphs = {make_core_problem(gen_family("conv", 36, 1), 6, 6),
                                     make_core_problem(gen_family("dag", 36, 2), 6, 6)};
  TrainOptions opt;
  opt.iterations = 12;
  opt.threshold = 4.0;
  opt.hidden = 8;
  std::vector<double> curve;
  Policy a = train_policy(graphs, opt, [&](int, double r) { curve.push_back(r); });
  Policy b = train_policy(graphs, opt);
  EXPECT_EQ(a.params(), b.params());
  EXPECT_EQ(curve.size(), 13u);
}

// A toy whose optimum is known: a 16-node chain on a 4x4 mesh, best placed along a Hamiltonian path
// of the mesh such as the Hilbert order (node i on the i-th core of the curve; 15 hops, spec reward
// -9; no placement has a total below 15 hops, so none has a reward above -7.5). Scores are rewards
// divided by |Hilbert reward|. Trained with the default options, the policy's own placement must
// move well towards that optimum from the untrained one.
TEST(Training, PpoImprovesTheRewardOnAChainToy) {
  LogicalGraph g;
  for (int i = 0; i < 16; ++i) g.add_node({std::to_string(i)});
  for (int i = 0; i + 1 < 16; ++i) g.add_edge(i, i + 1, 1.0);
  std::vector<CoreProblem> graphs = {make_core_problem(g, 4, 4)};
  TrainOptions opt;
  opt.iterations = 200;
  opt.threshold = 0.5;
  opt.hidden = 8;
  std::vector<double> curve;
  Policy pol = train_policy(graphs, opt, [&](int, double r) { curve.push_back(r); });
  ASSERT_EQ(curve.size(), 201u);
  for (double r : curve) EXPECT_LE(r, -7.5 / 9.0);
  EXPECT_LT(curve.front(), -2.0);
  EXPECT_GT(curve.back(), curve.front() + 0.5);
  double best =
      core_reward(graphs[0], place_rl(graphs[0], pol), opt.routing) / 9.0;  // |Hilbert reward| = 9
  EXPECT_GE(best, curve.back() - 1e-12);
}

TEST(Training, PerNodeCreditIsDeterministic) {
  std::vector<CoreProblem> graphs = {make_core_problem(gen_family("dag", 36, 2), 6, 6)};
  TrainOptions opt;
  opt.iterations = 6;
  opt.threshold = 1.0;
  opt.hidden = 8;
  opt.node_credit = true;
  std::vector<double> curve;
  Policy a = train_policy(graphs, opt, [&](int, double r) { curve.push_back(r); });
  Policy b = train_policy(graphs, opt);
  EXPECT_EQ(a.params(), b.params());
  EXPECT_EQ(curve.size(), 7u);
}

TEST(Training, NodeCostsSumToTwiceThePlacementCost) {
  CoreProblem pb = make_core_problem(gen_random_dag(20, 4, 2, 7), 5, 5);
  std::vector<int> pos = place_hilbert(pb);
  auto c = node_costs(pb, pos);
  double sum = 0.0;
  for (double x : c) sum += x;
  EXPECT_DOUBLE_EQ(sum, 2.0 * core_cost(pb, pos));
}

}  // namespace
}  // namespace tessera::mapper
