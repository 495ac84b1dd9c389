// The policy's 2-D output (x and y on the mesh; its gradients are checked in rl_test.cpp), its
// action space, the training options that go with it (cost reward, curriculum, held-out score) and
// the suites' training problems.
#include <cmath>

#include <gtest/gtest.h>

#include "common/error.h"
#include "mapper/bench_suite.h"
#include "mapper/generators.h"
#include "mapper/placers.h"
#include "mapper/rl_placer.h"

namespace tessera::mapper {
namespace {

LogicalGraph chain(int n) {
  LogicalGraph g;
  for (int i = 0; i < n; ++i) g.add_node({std::to_string(i)});
  for (int i = 0; i + 1 < n; ++i) g.add_edge(i, i + 1, 1.0);
  return g;
}

TEST(Positions, TheMeshIsScaledIntoTheBoundSquareOneStepPerCore) {
  SystemSpec sys = make_system(1, 4, 3);
  sys.occupied[0][5] = true;  // core (1, 1) is taken
  LogicalGraph g = chain(4);
  CoreProblem pb = make_core_problem(g, sys, std::vector<int>(4, 0), 0);
  Positions p = make_positions(pb, 2, 1.5);
  ASSERT_EQ(p.size(), 11);
  ASSERT_EQ(p.dims(), 2);
  EXPECT_DOUBLE_EQ(p.step, 1.0);  // 2 * 1.5 / (4 - 1)
  EXPECT_EQ(p.cores, pb.free);
  for (int j = 0; j < p.size(); ++j) {
    EXPECT_DOUBLE_EQ(p.z(j, 0), -1.5 + p.cores[j] % 4);
    EXPECT_DOUBLE_EQ(p.z(j, 1), -1.5 + p.cores[j] / 4);
  }
  // The most probable core of a mean is the nearest free one: (1, 1) is occupied, so a mean on it
  // goes to the lowest of its four neighbours, (1, 0) = core 1.
  EXPECT_EQ(p.cores[most_probable_position(p, Eigen::RowVector2d(-0.5, -0.5))], 1);
  EXPECT_EQ(p.cores[most_probable_position(p, Eigen::RowVector2d(9.0, 9.0))], 11);
}

TEST(Positions, TheLineIsTheHilbertOrder) {
  CoreProblem pb = make_core_problem(chain(16), 4, 4);
  Positions p = make_positions(pb, 1, 1.0);
  EXPECT_EQ(p.cores, hilbert_order(4, 4, pb.free));
  EXPECT_EQ(p.dims(), 1);
  EXPECT_DOUBLE_EQ(p.z(0, 0), -1.0);
  EXPECT_DOUBLE_EQ(p.z(15, 0), 1.0);
  EXPECT_EQ(most_probable_position(p, Eigen::RowVectorXd::Constant(1, 0.0)), 8);  // 7.5 rounds up
}

TEST(Positions, LogProbabilitiesAreANormalisedIsotropicGaussian) {
  CoreProblem pb = make_core_problem(chain(9), 3, 3);
  Positions p = make_positions(pb, 2, 1.0);
  Eigen::RowVector2d mu(0.2, -0.4);
  Eigen::VectorXd lp = position_log_probs(p, mu, 0.7);
  EXPECT_NEAR(lp.array().exp().sum(), 1.0, 1e-12);
  const double sigma = 0.7 * p.step;
  for (int j = 1; j < p.size(); ++j)
    EXPECT_NEAR(
        lp[j] - lp[0],
        -((p.z.row(j) - mu).squaredNorm() - (p.z.row(0) - mu).squaredNorm()) / (2 * sigma * sigma),
        1e-12);
}

TEST(Policy2d, ForwardGivesTwoBoundedOutputs) {
  CoreProblem pb = make_core_problem(gen_random_dag(20, 4, 2, 7), 5, 5);
  Policy pol(6, 1.5, 1.0, 2);
  pol.init(3);
  EXPECT_EQ(pol.outputs(), 2);
  EXPECT_EQ(pol.num_params(), 9 * 6 + 6 + 36 + 6 + 36 + 6 + 6 * 2 + 2);
  Eigen::MatrixXd mu = pol.forward(make_policy_input(pb));
  ASSERT_EQ(mu.rows(), pb.n());
  ASSERT_EQ(mu.cols(), 2);
  EXPECT_LE(mu.cwiseAbs().maxCoeff(), 1.5);
}

TEST(Policy2d, FileRoundTripsAsVersionTwoAndTruncationsAreNamed_bad) {
  Policy pol(3, 1.0, 1.0, 2);
  pol.init(4);
  const std::string bytes = pol.encode();
  EXPECT_EQ(bytes.size(), 48u + 8u * static_cast<size_t>(pol.num_params()));
  Policy back = Policy::decode(bytes, "p.bin");
  EXPECT_EQ(back.outputs(), 2);
  EXPECT_EQ(back.params(), pol.params());
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(Policy::decode(std::string_view(bytes).substr(0, n), "p.bin"), Error) << n;
  std::string three = bytes;
  three[20] = 3;
  try {
    Policy::decode(three, "p.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.bin: offset 20: 3 outputs, expected 1 or 2");
  }
  // A one-output policy keeps the version-1 layout.
  Policy one(3);
  EXPECT_EQ(one.encode().size(), 40u + 8u * static_cast<size_t>(one.num_params()));
  // Ten inputs (the second spectral coordinate) or the layout skip need version 2 even with one
  // output.
  Policy ten(3, 1.0, 1.0, 1, kPolicyInputsMesh);
  ten.init(5);
  ten.set_layout_skip(true);
  Policy ten_back = Policy::decode(ten.encode(), "p.bin");
  EXPECT_EQ(ten_back.inputs(), kPolicyInputsMesh);
  EXPECT_TRUE(ten_back.layout_skip());
  EXPECT_FALSE(back.layout_skip());
  EXPECT_EQ(ten_back.params(), ten.params());
  std::string flags = bytes;
  flags[24] = 4;  // bits 0 and 1 are the layout skip and sequential decoding
  try {
    Policy::decode(flags, "p.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.bin: offset 24: unknown flags 0x4");
  }
}

// With zero output weights the layout skip puts every node at 0.95 bound x its rank-scaled
// spectral coordinates: the extreme ranks at +-0.95 bound.
TEST(Policy2d, TheLayoutSkipStartsFromTheSpectralLayout) {
  CoreProblem pb = make_core_problem(gen_family("conv", 49, 1), 7, 7);
  PolicyInput in = make_policy_input(pb);
  Policy pol(4, 2.0, 1.0, 2, kPolicyInputsMesh);
  pol.set_layout_skip(true);
  Eigen::MatrixXd mu = pol.forward(in);
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(mu.col(c).minCoeff(), -1.9, 1e-12);
    EXPECT_NEAR(mu.col(c).maxCoeff(), 1.9, 1e-12);
    Eigen::Index lo = 0;
    in.x.col(8 + c).minCoeff(&lo);
    EXPECT_NEAR(mu(lo, c), -1.9, 1e-12);
  }
}

TEST(PolicyInput, TheSecondSpectralCoordinateIsNormalisedAndDiffersFromTheFirst) {
  CoreProblem pb = make_core_problem(gen_family("conv", 49, 1), 7, 7);
  PolicyInput in = make_policy_input(pb);
  ASSERT_EQ(in.x.cols(), kPolicyInputsMesh);
  EXPECT_DOUBLE_EQ(in.x.col(9).minCoeff(), 0.0);
  EXPECT_DOUBLE_EQ(in.x.col(9).maxCoeff(), 1.0);
  EXPECT_GT((in.x.col(9) - in.x.col(8)).cwiseAbs().maxCoeff(), 0.1);
  Policy nine(4), ten(4, 1.0, 1.0, 2, kPolicyInputsMesh);
  nine.init(1);
  ten.init(1);
  EXPECT_EQ(nine.forward(in).rows(), pb.n());
  EXPECT_EQ(ten.forward(in).cols(), 2);
}

TEST(Policy2d, PlacementIsValidAndDeterministic) {
  CoreProblem pb = make_core_problem(gen_family("conv", 30, 2), 6, 6);
  Policy pol(8, 1.0, 1.0, 2);
  pol.init(7);
  std::vector<int> a = place_rl(pb, pol);
  check_core_placement(pb, a);
  EXPECT_EQ(place_rl(pb, pol), a);
}

// One-shot and sequential decoding (sequential.h).
TEST(Training2d, IsDeterministicWithEveryNewOption) {
  std::vector<CoreProblem> graphs = {make_core_problem(gen_family("conv", 36, 1), 6, 6),
                                     make_core_problem(gen_family("dag", 16, 2), 4, 4)};
  HeldOut held_out({make_core_problem(gen_family("planted", 25, 3), 5, 5)});
  for (bool sequential : {false, true}) {
    TrainOptions opt;
    opt.iterations = 6;
    opt.threshold = 4.0;
    opt.hidden = 8;
    opt.outputs = 2;
    opt.inputs = kPolicyInputsMesh;
    opt.layout_skip = true;
    opt.reward = TrainReward::kCost;
    opt.curriculum = true;
    opt.node_credit = true;
    opt.sequential = sequential;
    std::vector<double> curve, held;
    Policy a = train_policy(
        graphs, opt, [&](int, double r) { curve.push_back(r); }, &held_out,
        [&](int, double c) { held.push_back(c); });
    Policy b = train_policy(graphs, opt);
    EXPECT_EQ(a.params(), b.params());
    EXPECT_EQ(a.outputs(), 2);
    EXPECT_EQ(a.sequential(), sequential);
    EXPECT_EQ(curve.size(), 7u);
    ASSERT_EQ(held.size(), 7u);
    for (double c : held) EXPECT_GT(c, 0.0);
    for (const CoreProblem& pb : graphs) check_core_placement(pb, place_rl(pb, a));
  }
}

// The chain toy of the 1-D test, in 2-D with the cost reward: a 16-node chain on 4x4 has a
// placement of cost 15 (a Hamiltonian path); the trained policy's own placement must improve on its
// first pass.
TEST(Training2d, PpoImprovesTheCostOnAChainToy) {
  std::vector<CoreProblem> graphs = {make_core_problem(chain(16), 4, 4)};
  TrainOptions opt;
  opt.iterations = 120;
  opt.threshold = 0.5;
  opt.hidden = 8;
  opt.outputs = 2;
  opt.reward = TrainReward::kCost;
  std::vector<double> curve;
  Policy pol = train_policy(graphs, opt, [&](int, double r) { curve.push_back(r); });
  ASSERT_EQ(curve.size(), 121u);
  double best = -1e9;
  for (double r : curve) best = std::max(best, r);
  EXPECT_GT(best, curve.front() + 0.1);
  // Scores are -cost / Hilbert cost (15): the returned policy's placement scores the best pass.
  EXPECT_DOUBLE_EQ(-core_cost(graphs[0], place_rl(graphs[0], pol)) / 15.0, best);
}

TEST(HeldOut, ScoreIsTheGeometricMeanOfCostOverGreedy) {
  std::vector<CoreProblem> pbs = {make_core_problem(gen_family("dag", 20, 1), 5, 5),
                                  make_core_problem(gen_family("random", 16, 2), 4, 4)};
  Policy pol(6);
  pol.init(2);
  HeldOut h(pbs);
  double lg = 0.0;
  for (const CoreProblem& pb : pbs)
    lg += std::log(core_cost(pb, place_rl(pb, pol)) / core_cost(pb, place_greedy(pb)));
  EXPECT_NEAR(h.score(pol), std::exp(lg / 2), 1e-12);
  EXPECT_FALSE(h.empty());
}

TEST(SuiteProblems, AreTheProcessorsOfTheSuitesGraphs) {
  std::vector<CoreProblem> s = suite_problems("S", {"mlp", "dag"}, 2, 100);
  ASSERT_EQ(s.size(), 4u);
  for (const CoreProblem& pb : s) {
    EXPECT_EQ(pb.width, 8);
    EXPECT_EQ(pb.height, 8);
  }
  EXPECT_EQ(s[0].n(), gen_family("mlp", 64, 100).num_nodes());
  std::vector<CoreProblem> m = suite_problems("M", {"tiles"}, 1, 1);
  ASSERT_EQ(m.size(), 4u);
  int nodes = 0;
  for (const CoreProblem& pb : m) nodes += pb.n();
  EXPECT_EQ(nodes, gen_family("tiles", 960, 1).num_nodes());
  EXPECT_THROW(suite_problems("X", {"mlp"}, 1, 1), Error);
}

}  // namespace
}  // namespace tessera::mapper
