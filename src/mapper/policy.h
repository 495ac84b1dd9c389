// The placement policy of docs/mapper.md ("Step 2"): graph convolution + fully connected
// layers, output bound * tanh = the mean of a Gaussian over core positions.
//
// Network (Eigen, double precision), n logical nodes, input X (n x kInputs):
//   H1 = relu(A X W1 + b1),  H2 = relu(A H1 W2 + b2)        two graph convolutions
//   H3 = relu(H2 W3 + b3)                                    fully connected read-out
//   mu = bound * tanh(H3 W4 + b4)                            n x outputs, in [-bound, bound]
// A = D^-1/2 (S + I) D^-1/2 is the symmetrically normalised adjacency (S = |W| + |W|^T scaled to
// max 1), i.e. I minus the normalised graph Laplacian of S + I.
// Input columns: the 7 spec features (features.h), then the node's normalised topological depth
// and its normalised spectral coordinate (Fiedler vector of the normalised Laplacian, power
// iteration) - position hints without which nodes with equal features cannot be told apart.
// Outputs: 1 (a position along the Hilbert order of the free cores) or 2 (x and y on the mesh); the
// row mu_i is the mean of node i's Gaussian over the positions (positions.h).
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
  Eigen::MatrixXd z4, mu;
};

class Policy {
 public:
  Policy(int hidden = 24, double bound = 1.0, double sigma_steps = 2.0, int outputs = 1);
  // Glorot-uniform weights from `seed`, zero biases.
  void init(uint64_t seed);

  // mu, n x outputs().
  Eigen::MatrixXd forward(const PolicyInput& in, PolicyTape* tape = nullptr) const;
  // Gradient of sum_ik g_mu(i, k) * mu(i, k) with respect to the parameters, in params() order.
  Eigen::VectorXd backward(const PolicyInput& in, const PolicyTape& tape,
                           const Eigen::MatrixXd& g_mu) const;

  Eigen::VectorXd params() const;
  void set_params(const Eigen::VectorXd& p);
  int num_params() const;
  double bound() const { return m_bound; }
  int outputs() const { return static_cast<int>(m_w4.cols()); }
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
  Eigen::MatrixXd m_w4;     // hidden x outputs
  Eigen::RowVectorXd m_b4;  // outputs
};

}  // namespace tessera::mapper
