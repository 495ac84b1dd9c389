// Central differences of a scalar function of a policy's parameters against its analytic gradient.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "mapper/policy.h"

namespace tessera::mapper {

// Central differences of f (of the policy's parameters) against the analytic gradient g, for
// every stride-th parameter; returns how many were checked.
inline int expect_gradient_matches(Policy& pol, const Eigen::VectorXd& g,
                                   const std::function<double()>& f, int stride, double tol) {
  Eigen::VectorXd p = pol.params();
  const double h = 1e-6;
  int checked = 0;
  for (int k = 0; k < p.size(); k += stride) {
    Eigen::VectorXd q = p;
    q[k] += h;
    pol.set_params(q);
    double up = f();
    q[k] -= 2 * h;
    pol.set_params(q);
    double down = f();
    EXPECT_NEAR(g[k], (up - down) / (2 * h), tol * std::max(1.0, std::fabs(g[k]))) << "param " << k;
    ++checked;
  }
  pol.set_params(p);
  return checked;
}

}  // namespace tessera::mapper
