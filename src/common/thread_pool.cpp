#include "common/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU seconds the calling thread has used.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) throw Error("threads", fmt::format("{} threads: need at least 1", threads));
  m_times.resize(static_cast<size_t>(threads));
  m_busy.resize(static_cast<size_t>(threads));
  m_cpu.resize(static_cast<size_t>(threads));
  for (int t = 1; t < threads; ++t) m_workers.emplace_back([this, t] { worker(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  for (std::thread& w : m_workers) w.join();
}

void ThreadPool::take_tasks(int thread) {
  std::unique_lock lock(m_mutex);
  while (m_next < m_tasks) {
    const int task = m_next++;
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    try {
      (*m_body)(task);
    } catch (...) {
      m_errors[static_cast<size_t>(task)] = std::current_exception();
    }
    // CPU time first: a thread preempted as that system call returns is still busy.
    const double cpu = thread_cpu_seconds() - cpu_start, busy = seconds_since(start);
    lock.lock();
    m_busy[static_cast<size_t>(thread)] += busy;
    m_cpu[static_cast<size_t>(thread)] += cpu;
    if (++m_finished == m_tasks) m_done.notify_one();
  }
}

void ThreadPool::worker(int thread) {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_wake.wait(lock, [&] { return m_stop || m_next < m_tasks; });
    if (m_stop) return;
    lock.unlock();
    take_tasks(thread);
    lock.lock();
  }
}

void ThreadPool::run(int tasks, const std::function<void(int)>& body) {
  if (tasks <= 0) return;
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(m_mutex);
    m_body = &body;
    m_tasks = tasks;
    m_next = 0;
    m_finished = 0;
    m_errors.assign(static_cast<size_t>(tasks), nullptr);
    std::fill(m_busy.begin(), m_busy.end(), 0.0);
    std::fill(m_cpu.begin(), m_cpu.end(), 0.0);
  }
  if (!m_workers.empty()) m_wake.notify_all();
  take_tasks(0);
  {
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [&] { return m_finished == m_tasks; });
    m_body = nullptr;
    m_tasks = 0;
    m_next = 0;
  }
  const double phase = seconds_since(start);
  for (size_t t = 0; t < m_times.size(); ++t) {
    m_times[t].busy_seconds += m_busy[t];
    m_times[t].wait_seconds += std::max(0.0, phase - m_busy[t]);
    m_times[t].cpu_seconds += m_cpu[t];
  }
  ++m_phases;
  m_phase_seconds += phase;
  for (const std::exception_ptr& e : m_errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tessera
