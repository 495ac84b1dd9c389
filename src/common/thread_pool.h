// ThreadPool: a fixed set of host threads that runs phases of independent tasks.
//
// A phase is run(tasks, body): body(i) for every i in [0, tasks), spread over the pool's T threads
// (the calling thread is thread 0; the other T - 1 are std::threads started once by the
// constructor and parked between phases). run returns when every task has finished. Which thread
// runs which task, and in which order tasks finish, is unspecified: a task may only touch state
// that no other task of the phase touches, and the caller merges shared results after the phase
// in task order, so what a phase computes never depends on T or on the host's scheduling.
// With T = 1 the caller runs the tasks in order and no thread is started.
//
// Host time (for reports, not for results): per thread, the seconds spent in tasks (busy) and the
// seconds of each phase it spent not running a task while the phase lasted (waiting: it had no
// task left while another thread still ran one, or it had not been woken yet), and the CPU seconds
// the thread got while busy (on a host shared with other jobs busy time includes time the thread
// was not scheduled; CPU time does not). phase_seconds is the wall time of every phase, from the
// start of run to its return: the sum of busy times over threads divided by it is the phases'
// achieved speed-up over running the same tasks one after another on one thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera {

class ThreadPool {
 public:
  struct ThreadTime {
    double busy_seconds = 0;
    double wait_seconds = 0;
    double cpu_seconds = 0;  // CPU time of the thread while busy (less than busy on a loaded host)
  };

  // threads >= 1 (Error otherwise).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(m_times.size()); }
  // Runs body(0..tasks-1) as described above. If tasks throw, the exception of the lowest such
  // task is rethrown after every task has finished (the others are dropped).
  void run(int tasks, const std::function<void(int)>& body);
  // Per thread (index 0 = the caller), summed over every phase so far.
  const std::vector<ThreadTime>& times() const { return m_times; }
  int64_t phases() const { return m_phases; }
  double phase_seconds() const { return m_phase_seconds; }

 private:
  void worker(int thread);
  // Runs tasks of the current phase until none is left to take, adding to m_busy[thread].
  void take_tasks(int thread);

  std::vector<ThreadTime> m_times;
  std::vector<std::thread> m_workers;
  // The current phase, under m_mutex: a worker takes tasks while m_next < m_tasks; run waits
  // until m_finished == m_tasks (a worker that wakes after every task was taken does nothing, so
  // no phase waits for an idle thread to wake).
  std::mutex m_mutex;
  std::condition_variable m_wake, m_done;
  bool m_stop = false;
  int64_t m_phases = 0;
  double m_phase_seconds = 0;
  const std::function<void(int)>* m_body = nullptr;
  int m_tasks = 0;
  int m_next = 0;
  int m_finished = 0;
  std::vector<std::exception_ptr> m_errors;
  std::vector<double> m_busy, m_cpu;  // per thread, this phase
};

}  // namespace tessera
