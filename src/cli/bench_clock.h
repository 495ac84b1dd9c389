// The benchmarks' host clock: CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID). The
// simulators and the native baselines they are compared with run single-threaded on the calling
// thread, and thread CPU time stays meaningful on a loaded, shared host where wall time does not.
#pragma once

#include <ctime>

namespace tessera::cli {

inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace tessera::cli
