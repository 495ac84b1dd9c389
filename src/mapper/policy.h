// The placement policy of docs/mapper.md ("Step 2"): graph convolution + fully connected
// layers, output bound * tanh = the mean of a Gaussian over core positions.
//
// Network (Eigen, double precision), n logical nodes, input X (n x kInputs):
//   H1 = relu(A X W1 + b1),  H2 = relu(A H1 W2 + b2)        two graph convolutions
//   H3 = relu(H2 W3 + b3)                                    fully connected read-out
//   mu = bound * tanh(H3 W4 + b4 [+ L])                      n x outputs, in [-bound, bound]
// With the layout skip, L (PolicyInput::layout) adds the spectral layout to the pre-activation, so
// the network learns an offset from that layout rather than a layout from nothing: with H3 W4 +
// b4 = 0 node i's mean is 0.95 bound x its rank-scaled spectral coordinates.
// A = D^-1/2 (S + I) D^-1/2 is the symmetrically normalised adjacency (S = |W| + |W|^T scaled to
// max 1), i.e. I minus the normalised graph Laplacian of S + I.
// Input columns: the 7 spec features (features.h), then the node's normalised topological depth
// and its normalised spectral coordinate (Fiedler vector of the normalised Laplacian, power
// iteration) - position hints without which nodes with equal features cannot be told apart - and a
// second spectral coordinate (the next eigenvector), a hint for the second axis of a mesh. A policy
// takes the first inputs() columns: 9 (kPolicyInputs) or all 10 (kPolicyInputsMesh).
// Outputs: 1 (a position along the Hilbert order of the free cores) or 2 (x and y on the mesh); the
// row mu_i is the mean of node i's Gaussian over the positions (positions.h).
// Sequential decoding (sequential.h) adds a head: theta = H3 W5 + b5 (n x kHeadFeatures), node i's
// weights for the features of a candidate core given the nodes placed before it. W5 starts at zero
// and b5 at kHeadInit, so an untrained sequential policy weighs every node's features alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Sparse>

#include "mapper/core_problem.h"
#include "mapper/sequential.h"

namespace tessera::mapper {

inline constexpr int kPolicyInputs = 9;
inline constexpr int kPolicyInputsMesh = 10;

struct PolicyInput {
  Eigen::SparseMatrix<double> adj;  // A, n x n
  Eigen::MatrixXd x;                // n x kPolicyInputsMesh
  // n x 2: atanh(0.95 c), c = the rank of the node's first (second) spectral coordinate scaled to
  // [-1, 1] (ties by node id); the layout skip's term.
  Eigen::MatrixXd layout;
};

PolicyInput make_policy_input(const CoreProblem& pb);

// Cached activations of one forward pass (for backward).
struct PolicyTape {
  Eigen::MatrixXd ax, z1, h1, ah1, z2, h2, z3, h3;
  Eigen::MatrixXd z4, mu;
};

class Policy {
 public:
  Policy(int hidden = 24, double bound = 1.0, double sigma_steps = 2.0, int outputs = 1,
         int inputs = kPolicyInputs);
  // Glorot-uniform weights from `seed`, zero biases.
  void init(uint64_t seed);

  // mu, n x outputs().
  Eigen::MatrixXd forward(const PolicyInput& in, PolicyTape* tape = nullptr) const;
  // The sequential head's weights per node (n x kHeadFeatures) from a forward pass's tape; only
  // for a sequential policy.
  Eigen::MatrixXd head(const PolicyTape& tape) const;
  // Gradient of sum_ik g_mu(i, k) * mu(i, k) [+ sum_ik g_theta(i, k) * theta(i, k)] with respect to
  // the parameters, in params() order.
  Eigen::VectorXd backward(const PolicyInput& in, const PolicyTape& tape,
                           const Eigen::MatrixXd& g_mu,
                           const Eigen::MatrixXd* g_theta = nullptr) const;

  Eigen::VectorXd params() const;
  void set_params(const Eigen::VectorXd& p);
  int num_params() const;
  double bound() const { return m_bound; }
  int outputs() const { return static_cast<int>(m_w4.cols()); }
  int inputs() const { return static_cast<int>(m_w1.rows()); }
  bool layout_skip() const { return m_layout_skip; }
  void set_layout_skip(bool on) { m_layout_skip = on; }
  // Sequential decoding: nodes placed one at a time (sequential.h). Turning it on adds the head's
  // parameters at their initial values (after the others in params() order); off removes them.
  bool sequential() const { return m_w5.cols() > 0; }
  void set_sequential(bool on);
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
  bool m_layout_skip = false;
  Eigen::MatrixXd m_w1, m_w2, m_w3;
  Eigen::RowVectorXd m_b1, m_b2, m_b3;
  Eigen::MatrixXd m_w4;     // hidden x outputs
  Eigen::RowVectorXd m_b4;  // outputs
  Eigen::MatrixXd m_w5;     // hidden x kHeadFeatures (sequential), else hidden x 0
  Eigen::RowVectorXd m_b5;  // kHeadFeatures (sequential), else empty
};

}  // namespace tessera::mapper
