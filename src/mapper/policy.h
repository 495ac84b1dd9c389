// The placement policy of docs/mapper.md ("Step 2"): graph convolution + fully connected
// layers, output bound * tanh = the mean of a Gaussian over core positions.
//
// Network (Eigen, double precision), n logical nodes, input X (n x kInputs):
//   H1 = relu(A X W1 + b1),  H2 = relu(A H1 W2 + b2)        two graph convolutions
//   H3 = relu(H2 W3 + b3)                                    fully connected read-out
//   mu = bound * tanh(H3 w4 + b4)                            one mean per node, in [-bound, bound]
// A = D^-1/2 (S + I) D^-1/2 is the symmetrically normalised adjacency (S = |W| + |W|^T scaled to
// max 1), i.e. I minus the normalised graph Laplacian of S + I.
// Input columns: the 7 spec features (features.h), then the node's normalised topological depth
// and its normalised spectral coordinate (Fiedler vector of the normalised Laplacian, power
// iteration) - position hints without which nodes with equal features cannot be told apart.
// Positions: the m free cores in Hilbert order; position j sits at z_j = -bound + j * step,
// step = 2 * bound / (m - 1); P(core j | node i) is proportional to exp(-(z_j - mu_i)^2 / 2
// sigma^2), sigma = sigma_steps * step.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Sparse>

#include "mapper/core_problem.h"

namespace tessera::mapper {

inline constexpr int kPolicyInputs = 9;

struct PolicyInput {
  Eigen::SparseMatrix<double> adj;  // A, n x n
  Eigen::MatrixXd x;                // n x kPolicyInputs
};

PolicyInput make_policy_input(const CoreProblem& pb);

// Cached activations of one forward pass (for backward).
struct PolicyTape {
  Eigen::MatrixXd ax, z1, h1, ah1, z2, h2, z3, h3;
  Eigen::VectorXd z4, mu;
};

class Policy {
 public:
  Policy(int hidden = 24, double bound = 1.0, double sigma_steps = 2.0);
  // Glorot-uniform weights from `seed`, zero biases.
  void init(uint64_t seed);

  Eigen::VectorXd forward(const PolicyInput& in, PolicyTape* tape = nullptr) const;
  // Gradient of sum_i g_mu[i] * mu_i with respect to the parameters, in params() order.
  Eigen::VectorXd backward(const PolicyInput& in, const PolicyTape& tape,
                           const Eigen::VectorXd& g_mu) const;

  Eigen::VectorXd params() const;
  void set_params(const Eigen::VectorXd& p);
  int num_params() const;
  double bound() const { return m_bound; }
  double sigma_steps() const { return m_sigma_steps; }
  void set_sigma_steps(double s) { m_sigma_steps = s; }

  // The policy file (format in policy.cpp); errors name the file, and the byte offset of what a
  // file that is truncated, too long or malformed got wrong.
  std::string encode() const;
  static Policy decode(std::string_view bytes, const std::string& path);
  void save(const std::string& path) const;  // checked writes (common/file_io.h)
  static Policy load(const std::string& path);

 private:
  int m_hidden;
  double m_bound;
  double m_sigma_steps;
  Eigen::MatrixXd m_w1, m_w2, m_w3;
  Eigen::RowVectorXd m_b1, m_b2, m_b3;
  Eigen::VectorXd m_w4;
  double m_b4 = 0.0;
};

// The discretised Gaussian of one node: log P(core position j) for j in [0, m).
Eigen::VectorXd position_log_probs(double mu, int m, double bound, double sigma_steps);

}  // namespace tessera::mapper
