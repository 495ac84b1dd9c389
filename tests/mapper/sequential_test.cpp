// Sequential placement (sequential.h): masks, determinism, the head's gradients through PPO, the
// policy file's sequential flag, and training with it.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "common/error.h"
#include "mapper/generators.h"
#include "mapper/gradient_check.h"
#include "mapper/placers.h"
#include "mapper/rl_placer.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

Policy sequential_policy(int outputs, uint64_t seed, int inputs = kPolicyInputs) {
  Policy pol(6, 1.0, 1.0, outputs, inputs);
  pol.set_sequential(true);
  pol.init(seed);
  return pol;
}

// A 6x6 mesh with four occupied cores and exactly as many nodes as free cores.
CoreProblem full_problem() {
  SystemSpec sys = make_system(1, 6, 6);
  for (int c : {0, 7, 20, 35}) sys.occupied[0][c] = true;
  LogicalGraph g = gen_random_dag(32, 5, 2, 3);
  return make_core_problem(g, sys, std::vector<int>(g.num_nodes(), 0), 0);
}

TEST(Sequential, PlacementsNeverCollideAndAvoidOccupiedCores) {
  for (int outputs : {1, 2}) {
    CoreProblem pb = full_problem();
    ASSERT_EQ(static_cast<int>(pb.free.size()), pb.n());
    Policy pol = sequential_policy(outputs, 5);
    std::vector<int> pos = place_rl(pb, pol);
    check_core_placement(pb, pos);
    // Any choice among the positions left (here: a random one) keeps the placement valid, and
    // every taken position has probability 0.
    const Positions positions = make_positions(pb, outputs, pol.bound());
    PolicyTape tape;
    const Eigen::MatrixXd mu = pol.forward(make_policy_input(pb), &tape);
    Rng rng(9);
    std::vector<char> taken(positions.size(), 0);
    int decisions = 0;
    std::vector<int> act = decode_sequential(
        pb, positions, mu, pol.head(tape), pol.sigma_steps(),
        [&](int, const Eigen::VectorXd& lp) {
          std::vector<int> open;
          for (int j = 0; j < lp.size(); ++j)
            if (std::isfinite(lp[j])) open.push_back(j);
          EXPECT_EQ(static_cast<int>(open.size()), positions.size() - decisions);
          EXPECT_NEAR(lp.array().exp().sum(), 1.0, 1e-9);
          return open[rng.below(static_cast<int>(open.size()))];
        },
        [&](int, const Eigen::VectorXd& lp, const Eigen::MatrixXd& phi, int a) {
          for (int j = 0; j < lp.size(); ++j)
            if (taken[j]) {
              EXPECT_TRUE(std::isinf(lp[j]));
              EXPECT_EQ(phi.row(j).norm(), 0.0);
            }
          taken[a] = 1;
          ++decisions;
        });
    EXPECT_EQ(decisions, pb.n());
    std::vector<int> cores(pb.n());
    for (int v = 0; v < pb.n(); ++v) cores[v] = positions.cores[act[v]];
    check_core_placement(pb, cores);
  }
}

TEST(Sequential, SameSeedGivesTheSamePlacement) {
  CoreProblem pb = make_core_problem(gen_family("dag", 40, 2), 7, 7);
  Policy a = sequential_policy(2, 3), b = sequential_policy(2, 3);
  EXPECT_EQ(a.params(), b.params());
  const std::vector<int> pos = place_rl(pb, a);
  check_core_placement(pb, pos);
  EXPECT_EQ(place_rl(pb, b), pos);
  EXPECT_EQ(place_rl(pb, a), pos);
}

// The features of a candidate: attraction to placed neighbours, room for those to come, distance
// to the centre.
TEST(Sequential, FeaturesOfTheSecondNodeOfAPair) {
  LogicalGraph g;
  for (int i = 0; i < 2; ++i) g.add_node({std::to_string(i)});
  g.add_edge(0, 1, 2.0);
  CoreProblem pb = make_core_problem(g, 3, 3);
  const Positions positions = make_positions(pb, 2, 1.0);
  Eigen::MatrixXd mu = Eigen::MatrixXd::Zero(2, 2);
  Eigen::MatrixXd theta = Eigen::MatrixXd::Zero(2, kHeadFeatures);
  std::vector<Eigen::MatrixXd> seen;
  decode_sequential(
      pb, positions, mu, theta, 1.0, [](int v, const Eigen::VectorXd&) { return v == 0 ? 4 : 0; },
      [&](int v, const Eigen::VectorXd&, const Eigen::MatrixXd& phi, int) {
        if (v == 1) seen.push_back(phi);
      });
  ASSERT_EQ(seen.size(), 1u);
  // Node 0 took the centre (4); node 1 at corner 0 is 2 steps away, has 2 open neighbours of 4 and
  // nothing left to place (room 0), and sits 2/3 of the side from the centre.
  EXPECT_DOUBLE_EQ(seen[0](0, 0), -2.0);
  EXPECT_DOUBLE_EQ(seen[0](0, 1), 0.0);
  EXPECT_DOUBLE_EQ(seen[0](0, 2), -2.0 / 3.0);
  EXPECT_DOUBLE_EQ(seen[0](1, 0), -1.0);
  EXPECT_EQ(seen[0].row(4).norm(), 0.0);
}

// With theta = 0 the first decision is the one-shot Gaussian's, and a strong attraction puts each
// node of a chain next to the one before.
TEST(Sequential, AttractionPlacesAChainAlongAPath) {
  LogicalGraph g;
  for (int i = 0; i < 9; ++i) g.add_node({std::to_string(i)});
  for (int i = 0; i + 1 < 9; ++i) g.add_edge(i, i + 1, 1.0);
  CoreProblem pb = make_core_problem(g, 3, 3);
  const Positions positions = make_positions(pb, 2, 1.0);
  Eigen::MatrixXd mu = Eigen::MatrixXd::Zero(9, 2);
  Eigen::MatrixXd theta = Eigen::MatrixXd::Zero(9, kHeadFeatures);
  theta.col(0).setConstant(50.0);
  std::vector<int> act =
      decode_sequential(pb, positions, mu, theta, 1.0,
                        [](int, const Eigen::VectorXd& lp) { return most_probable(lp); });
  std::vector<int> pos(9);
  for (int v = 0; v < 9; ++v) pos[v] = positions.cores[act[v]];
  check_core_placement(pb, pos);
  // The first node placed (the attachment order starts at a node of the largest total weight, a
  // middle one) goes to the Gaussian's most probable core, the centre.
  EXPECT_EQ(pos[attachment_order(pb)[0]], 4);
  EXPECT_LE(core_cost(pb, pos), 10.0);
}

// The clipped objective's gradient through the sequential decisions (mu and the head), replayed
// from recorded actions.
TEST(Sequential, PpoGradientMatchesFiniteDifferences) {
  for (int outputs : {1, 2}) {
    CoreProblem pb = make_core_problem(gen_random_dag(14, 4, 2, 9), 4, 4);
    PolicyInput in = make_policy_input(pb);
    Policy pol = sequential_policy(outputs, 11);
    Eigen::VectorXd p = pol.params();
    for (int k = 0; k < p.size(); ++k) p[k] += 0.2 * std::cos(0.9 * k);  // head weights non-zero
    pol.set_params(p);
    Policy old = pol;
    Eigen::VectorXd po = old.params();
    for (int k = 0; k < po.size(); ++k) po[k] += 0.3 * std::sin(1.7 * k);
    old.set_params(po);
    const Positions positions = make_positions(pb, outputs, old.bound());
    PolicyTape tape;
    const Eigen::MatrixXd mu_old = old.forward(in, &tape);
    std::vector<PpoItem> batch;
    Rng rng(4);
    for (double adv : {1.3, -0.7}) {
      PpoItem it{.input = &in, .advantage = adv, .positions = &positions, .problem = &pb};
      it.old_logp.assign(pb.n(), 0.0);
      it.actions = decode_sequential(
          pb, positions, mu_old, old.head(tape), old.sigma_steps(),
          [&](int, const Eigen::VectorXd& lp) {
            int j;
            do j = rng.below(static_cast<int>(lp.size()));
            while (!std::isfinite(lp[j]));
            return j;
          },
          [&](int v, const Eigen::VectorXd& lp, const Eigen::MatrixXd&, int a) {
            it.old_logp[v] = lp[a];
          });
      if (adv < 0)
        for (int v = 0; v < pb.n(); ++v) it.node_advantage.push_back(std::cos(2.3 * v));
      batch.push_back(it);
    }
    Eigen::VectorXd g;
    ppo_objective(pol, batch, 0.2, &g);
    EXPECT_GT(g.tail(kHeadFeatures).norm(), 0.0);
    const int checked = expect_gradient_matches(
        pol, g, [&] { return ppo_objective(pol, batch, 0.2, nullptr); }, 1, 1e-5);
    EXPECT_GT(checked, 10);
  }
}

TEST(Sequential, PolicyFileCarriesTheFlagAndTheHead_bad) {
  Policy pol = sequential_policy(1, 6);
  EXPECT_EQ(pol.num_params(), Policy(6).num_params() + 6 * kHeadFeatures + kHeadFeatures);
  const std::string bytes = pol.encode();
  EXPECT_EQ(bytes.size(), 48u + 8u * static_cast<size_t>(pol.num_params()));  // version 2
  EXPECT_EQ(bytes[24], 2);                                                    // flags
  Policy back = Policy::decode(bytes, "p.bin");
  EXPECT_TRUE(back.sequential());
  EXPECT_FALSE(back.layout_skip());
  EXPECT_EQ(back.params(), pol.params());
  CoreProblem pb = make_core_problem(gen_family("planted", 20, 1), 5, 5);
  EXPECT_EQ(place_rl(pb, back), place_rl(pb, pol));
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(Policy::decode(std::string_view(bytes).substr(0, n), "p.bin"), Error) << n;
  std::string bad = bytes;
  bad[24] = 4;
  try {
    Policy::decode(bad, "p.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.bin: offset 24: unknown flags 0x4");
  }
  // Without the flag the head's parameters are not expected: the count no longer matches.
  bad[24] = 0;
  EXPECT_THROW(Policy::decode(bad, "p.bin"), Error);
  // Both flags round trip; turning sequential off drops the head.
  Policy both = sequential_policy(2, 7, kPolicyInputsMesh);
  both.set_layout_skip(true);
  Policy both_back = Policy::decode(both.encode(), "p.bin");
  EXPECT_TRUE(both_back.sequential());
  EXPECT_TRUE(both_back.layout_skip());
  EXPECT_EQ(both_back.params(), both.params());
  both.set_sequential(false);
  EXPECT_EQ(both.num_params(), Policy(6, 1.0, 1.0, 2, kPolicyInputsMesh).num_params());
  EXPECT_THROW(both.head(PolicyTape{}), Error);
}

}  // namespace
}  // namespace tessera::mapper
