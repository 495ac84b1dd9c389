// ThreadPool (common/thread_pool.h): every task of a phase runs exactly once whatever the thread
// count; the lowest failing task's exception comes back after the phase; one thread runs the
// tasks in order on the caller; host time (wall and CPU) is kept per thread.
#include "common/thread_pool.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/error_of.h"

namespace tessera {
namespace {

TEST(ThreadPool, EveryTaskRunsExactlyOnceForEveryThreadCount) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int tasks : {0, 1, 2, 7, 100}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
      pool.run(tasks, [&](int i) { ++runs[static_cast<size_t>(i)]; });
      for (int i = 0; i < tasks; ++i)
        EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << threads << " threads, task " << i;
    }
    EXPECT_EQ(pool.threads(), threads);
    EXPECT_EQ(pool.times().size(), static_cast<size_t>(threads));
  }
}

TEST(ThreadPool, OneThreadRunsTheTasksInOrderOnTheCaller) {
  ThreadPool pool(1);
  std::vector<int> order;
  const std::thread::id caller = std::this_thread::get_id();
  pool.run(5, [&](int i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(ThreadPool, TheLowestFailingTasksExceptionIsRethrownAfterEveryTaskRan) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    std::atomic<int> ran{0};
    EXPECT_EQ(testing::error_of([&] {
                pool.run(9, [&](int i) {
                  ++ran;
                  if (i % 3 == 2) throw Error("task " + std::to_string(i), "failed");
                });
              }),
              "task 2: failed")
        << threads;
    EXPECT_EQ(ran.load(), 9) << threads;
    pool.run(3, [&](int) { ++ran; });  // the pool works on after a failed phase
    EXPECT_EQ(ran.load(), 12) << threads;
  }
}

TEST(ThreadPool, BusyTimeIsCountedPerThreadAndPhases) {
  ThreadPool pool(2);
  pool.run(4, [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(5)); });
  EXPECT_EQ(pool.phases(), 1);
  double busy = 0, cpu = 0;
  for (const ThreadPool::ThreadTime& t : pool.times()) {
    EXPECT_GE(t.busy_seconds, 0.0);
    EXPECT_GE(t.wait_seconds, 0.0);
    busy += t.busy_seconds;
    cpu += t.cpu_seconds;
  }
  EXPECT_GE(busy, 0.019);  // four tasks of at least 5 ms each
  EXPECT_LT(cpu, busy);    // sleeping uses no CPU
}

TEST(ThreadPool, bad_thread_count) {
  EXPECT_EQ(testing::error_of([] { ThreadPool pool(0); }), "threads: 0 threads: need at least 1");
}

}  // namespace
}  // namespace tessera
