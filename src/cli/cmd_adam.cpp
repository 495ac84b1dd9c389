// `tessera adam --problem quadratic|rosenbrock|logistic --dim D [--lr A] [--ct C] [--max-iters N]
//   [--beta1 B1 --beta2 B2 --eps E --weight-decay W] [--seed S] [--config C] [--json]`
//   The standalone method (docs/adam-unit.md): runs the Adam unit's solve program (INSTRUCTION_IO,
//   HYPERPARAMETER_IO, ASSIGN, then per step MOMENT_ESTIMATE, DATA_IO, TRANSFER, MOMENT_UPDATE,
//   TRANSFER, PARAM_UPDATE, DATABACK_IO per block, CONVERGENCE_CHECK, loop) until the convergence
//   test fires or max-iters. The host computes g_t from theta_t-1 in HBM at each step's first
//   DATA_IO (not charged). Prints iterations, final objective, temp2 and simulated time.
// `tessera adam vectors --out FILE`: writes the test vectors (data/adam/) from numerics/adam.h.
// `tessera bench adam`: cli/bench/adam.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/adam_unit_session.h"
#include "cli/bench/adam_vectors.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "core/adam_unit.h"
#include "report/stats.h"
#include "system/machine_spec.h"

namespace tessera::cli {

namespace {

struct AdamArgs {
  std::string problem = "quadratic";
  int64_t dim = 1000;
  double lr = 1e-2, ct = 1e-6, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0;
  int64_t max_iters = 100000;
  uint64_t seed = 1;
  std::string config, out;
  bool json = false;
};

// The three problems (docs/adam-unit.md). Objective in double; gradient rounded to fp32.
struct Problem {
  std::string name;
  std::vector<float> x0;
  std::vector<double> target, feat;  // quadratic: c_i; logistic: features (rows x dim) and labels
  std::vector<double> labels;
  int64_t rows = 0;

  double objective(const std::vector<float>& x) const;
  std::vector<float> gradient(const std::vector<float>& x) const;
};

double Problem::objective(const std::vector<float>& x) const {
  const auto d = static_cast<int64_t>(x.size());
  double f = 0;
  if (name == "quadratic") {
    for (int64_t i = 0; i < d; ++i)
      f +=
          0.5 * static_cast<double>(i + 1) / static_cast<double>(d) * std::pow(x[i] - target[i], 2);
  } else if (name == "rosenbrock") {
    for (int64_t i = 0; i + 1 < d; ++i)
      f += 100 * std::pow(static_cast<double>(x[i + 1]) - static_cast<double>(x[i]) * x[i], 2) +
           std::pow(1.0 - x[i], 2);
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      double z = 0;
      for (int64_t i = 0; i < d; ++i) z += feat[r * d + i] * x[i];
      f += std::log1p(std::exp(-std::abs(z))) + std::max(z, 0.0) - labels[r] * z;
    }
    f /= static_cast<double>(rows);
  }
  return f;
}

std::vector<float> Problem::gradient(const std::vector<float>& x) const {
  const auto d = static_cast<int64_t>(x.size());
  std::vector<double> g(static_cast<size_t>(d), 0.0);
  if (name == "quadratic") {
    for (int64_t i = 0; i < d; ++i)
      g[i] = static_cast<double>(i + 1) / static_cast<double>(d) * (x[i] - target[i]);
  } else if (name == "rosenbrock") {
    for (int64_t i = 0; i + 1 < d; ++i) {
      const double a = static_cast<double>(x[i + 1]) - static_cast<double>(x[i]) * x[i];
      g[i] += -400 * x[i] * a - 2 * (1.0 - x[i]);
      g[i + 1] += 200 * a;
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      double z = 0;
      for (int64_t i = 0; i < d; ++i) z += feat[r * d + i] * x[i];
      const double p = 1.0 / (1.0 + std::exp(-z));
      for (int64_t i = 0; i < d; ++i)
        g[i] += (p - labels[r]) * feat[r * d + i] / static_cast<double>(rows);
    }
  }
  return std::vector<float>(g.begin(), g.end());
}

Problem make_problem(const AdamArgs& a) {
  if (a.dim < 1 || a.dim > (1 << 24))
    throw UsageError("--dim", fmt::format("{} outside [1, 16777216]", a.dim));
  Problem p;
  p.name = a.problem;
  std::mt19937_64 rng(a.seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  p.x0.assign(static_cast<size_t>(a.dim), 0.0f);
  if (p.name == "quadratic") {
    for (int64_t i = 0; i < a.dim; ++i) p.target.push_back(u(rng));
  } else if (p.name == "rosenbrock") {
    if (a.dim < 2) throw UsageError("--dim", "rosenbrock needs at least 2 dimensions");
    for (float& x : p.x0) x = -1.0f;
  } else {
    if (a.dim > (1 << 16))
      throw UsageError("--dim",
                       fmt::format("logistic: {} outside [1, 65536] (256 dense rows)", a.dim));
    p.rows = 256;
    std::vector<double> w(static_cast<size_t>(a.dim));
    for (double& x : w) x = u(rng);
    for (int64_t r = 0; r < p.rows; ++r) {
      double z = 0;
      for (int64_t i = 0; i < a.dim; ++i) {
        p.feat.push_back(u(rng));
        z += p.feat.back() * w[i];
      }
      p.labels.push_back(z > 0 ? 1.0 : 0.0);
    }
  }
  return p;
}

core::AdamHyper hyper_from(const AdamArgs& a) {
  core::AdamHyper h;
  h.lr = a.lr, h.b1 = a.b1, h.b2 = a.b2, h.eps = a.eps, h.ct = a.ct, h.weight_decay = a.wd;
  if (a.max_iters < 0 || a.max_iters > 0xffffffffll)
    throw UsageError("--max-iters", fmt::format("{} outside [0, 4294967295]", a.max_iters));
  h.max_iters = static_cast<uint32_t>(a.max_iters);
  return h;
}

void run_adam(const AdamArgs& a) {
  // The built-in defaults are those the config reader declares (CoreSpec{} leaves energies at 0).
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
  const Problem p = make_problem(a);
  bench::AdamUnitSession s(spec, a.dim, hyper_from(a));
  s.set_theta(p.x0);
  const double f0 = p.objective(p.x0);
  const int64_t it = s.solve([&](const std::vector<float>& x, int64_t) { return p.gradient(x); });
  const std::vector<float> x = s.theta();
  const double f = p.objective(x);
  const double seconds = static_cast<double>(s.cycles()) / spec.clock_hz;
  if (a.json) {
    report::StatGroup g;
    s.unit().report(g, spec.energy.hbm_byte_pj);
    nlohmann::ordered_json j = {{"problem", a.problem},
                                {"dim", a.dim},
                                {"lr", a.lr},
                                {"ct", a.ct},
                                {"iterations", it},
                                {"converged", s.unit().converged()},
                                {"temp2", s.unit().temp2()},
                                {"initial_objective", f0},
                                {"final_objective", f},
                                {"cycles", s.cycles()},
                                {"seconds", seconds},
                                {"unit", g.to_json()}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("problem %s, dim %lld: %s after %lld iterations (temp2 %.3g, ct %.3g)\n",
              a.problem.c_str(), static_cast<long long>(a.dim),
              s.unit().converged() ? "converged" : "stopped at --max-iters",
              static_cast<long long>(it), static_cast<double>(s.unit().temp2()), a.ct);
  std::printf("objective %.9g -> %.9g\nsimulated time %lld cycles = %.6g s at %.3g GHz\n", f0, f,
              static_cast<long long>(s.cycles()), seconds, spec.clock_hz / 1e9);
}

}  // namespace

void register_adam_command(CLI::App& app) {
  auto args = std::make_shared<AdamArgs>();
  auto* cmd =
      app.add_subcommand("adam", "the Adam optimizer unit's standalone method (docs/adam-unit.md)");
  cmd->add_option("--problem", args->problem, "objective")
      ->check(CLI::IsMember({"quadratic", "rosenbrock", "logistic"}))
      ->capture_default_str();
  cmd->add_option("--dim", args->dim, "parameters")->capture_default_str();
  cmd->add_option("--lr", args->lr, "step size alpha")->capture_default_str();
  cmd->add_option("--ct", args->ct, "convergence threshold")->capture_default_str();
  cmd->add_option("--max-iters", args->max_iters, "iteration limit (0 = none)")
      ->capture_default_str();
  cmd->add_option("--beta1", args->b1, "")->capture_default_str();
  cmd->add_option("--beta2", args->b2, "")->capture_default_str();
  cmd->add_option("--eps", args->eps, "")->capture_default_str();
  cmd->add_option("--weight-decay", args->wd, "decoupled weight decay (AdamW)")
      ->capture_default_str();
  add_seed_flag(*cmd, args->seed, "problem data");
  add_config_flag(*cmd, args->config);
  add_json_flag(*cmd, args->json);
  cmd->callback([args, cmd] {
    if (cmd->got_subcommand("vectors")) return;
    run_adam(*args);
  });
  auto* vec = cmd->add_subcommand("vectors", "write the Adam test vectors (data/adam/vectors.txt)");
  vec->add_option("--out", args->out, "output file")->required();
  vec->callback([args] { bench::write_adam_vectors(args->out); });
}

}  // namespace tessera::cli
