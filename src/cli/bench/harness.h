// The harness every `tessera bench` subcommand measures and reports with.
//
// Clock: CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID), with the wall seconds of the
// same runs beside them. The simulators and the native baselines they are compared with run
// single-threaded on the calling thread, and thread CPU time stays meaningful on a loaded, shared
// host where wall time does not.
//
// Three ways to repeat a measurement:
//   time_once    one run;
//   best_of      R runs, each after an untimed setup; the fastest (CPU seconds) counts;
//   interleave   several contenders, round-robin: round r runs every contender once, in order,
//                so that slow phases of a shared host hit all of them alike; optionally one
//                untimed warm-up run of a contender first, and an untimed setup before each
//                run. The samples give the best, the median or the mean.
// Reporting: print_report prints a JSON object (--json) or one "key value" line per figure.
#pragma once

#include <climits>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tessera::bench {

double thread_cpu_seconds();
double wall_seconds();  // a steady clock's seconds since an arbitrary origin

// CPU seconds of this thread and wall seconds of one measured run.
struct Timing {
  double cpu = 0, wall = 0;
};

template <typename F>
Timing time_once(F&& body) {
  const double c0 = thread_cpu_seconds(), w0 = wall_seconds();
  body();
  const double w1 = wall_seconds();
  return Timing{thread_cpu_seconds() - c0, w1 - w0};
}

// The run with the fewest CPU seconds of `reps` runs of `body`, each after an untimed `setup()`.
template <typename Setup, typename F>
Timing best_of(int reps, Setup&& setup, F&& body) {
  Timing best{1e300, 0};
  for (int r = 0; r < reps; ++r) {
    setup();
    const Timing t = time_once(body);
    if (t.cpu < best.cpu) best = t;
  }
  return best;
}

// Statistics of a series of CPU-second samples (non-empty).
double minimum(const std::vector<double>& samples);
double median(std::vector<double> samples);  // the mean of the middle two for an even count
double mean(const std::vector<double>& samples);
double sum(const std::vector<double>& samples);

// One timed body of an interleaved comparison and its CPU-second samples, one per round it ran.
struct Contender {
  std::function<void(int round)> run;    // round -1: the untimed warm-up
  std::function<void(int round)> setup;  // if set: untimed, before each run
  bool warm_up = false;                  // one untimed run before the first round
  int rounds = INT_MAX;                  // takes part in the first `rounds` rounds only
  std::vector<double> seconds;
};

// Warm-up runs (contenders in order), then `rounds` rounds of every contender in order.
void interleave(int rounds, const std::vector<Contender*>& contenders);

// How print_report prints: --json gives the object, on one line (json_indent < 0) or indented by
// json_indent; otherwise one line per figure, "key value", keys left-aligned in key_width columns.
struct ReportFormat {
  bool json = false;
  int json_indent = -1;
  int key_width = 18;
};

template <typename Json>
void print_report(const Json& j, const ReportFormat& f) {
  if (f.json) {
    std::printf("%s\n", j.dump(f.json_indent).c_str());
    return;
  }
  for (const auto& [key, value] : j.items())
    std::printf("%-*s %s\n", f.key_width, key.c_str(), value.dump().c_str());
}

// Flags several benchmarks take, declared once (--config, --json, --seed: cli/common_flags.h).
// --reps R: how many repetitions; `statistic` says which counts ("best time counts").
CLI::Option* add_reps_flag(CLI::App& cmd, int& reps, const std::string& statistic);
// --m, --k, --n: C (m x n) = A (m x k) x B (k x n).
void add_matmul_shape_flags(CLI::App& cmd, int& m, int& k, int& n);

}  // namespace tessera::bench
