#include "cli/bench/harness.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <numeric>

#include <CLI/CLI.hpp>

namespace tessera::bench {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double minimum(const std::vector<double>& samples) {
  return *std::min_element(samples.begin(), samples.end());
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t m = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[m] : 0.5 * (samples[m - 1] + samples[m]);
}

double sum(const std::vector<double>& samples) {
  return std::accumulate(samples.begin(), samples.end(), 0.0);
}

double mean(const std::vector<double>& samples) {
  return sum(samples) / static_cast<double>(samples.size());
}

void interleave(int rounds, const std::vector<Contender*>& contenders) {
  const auto setup = [](Contender& c, int round) {
    if (c.setup) c.setup(round);
  };
  for (Contender* c : contenders)
    if (c->warm_up) setup(*c, -1), c->run(-1);
  for (int round = 0; round < rounds; ++round)
    for (Contender* c : contenders)
      if (round < c->rounds) {
        setup(*c, round);
        c->seconds.push_back(time_once([&] { c->run(round); }).cpu);
      }
}

CLI::Option* add_reps_flag(CLI::App& cmd, int& reps, const std::string& statistic) {
  return cmd.add_option("--reps", reps, "repetitions (" + statistic + ")")->capture_default_str();
}

void add_matmul_shape_flags(CLI::App& cmd, int& m, int& k, int& n) {
  cmd.add_option("--m", m, "rows of A (the inputs) and C")->capture_default_str();
  cmd.add_option("--k", k, "columns of A, rows of B (the reduction length)")->capture_default_str();
  cmd.add_option("--n", n, "columns of B (the weights) and C")->capture_default_str();
}

}  // namespace tessera::bench
