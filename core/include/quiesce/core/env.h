// The environment: host-side time and concurrency for code under test.
//
// Code under test never reads a wall clock or spawns an OS thread directly; it goes through an Env. The
// real environment (RealEnv) uses std::thread and steady_clock; the simulated one (sim::FiberEnv) runs
// fibers on the simulator's virtual clock. Nothing in code written against the Env concept knows which one
// it has.
#pragma once

#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace quiesce {

template <class E>
concept Env = requires(E& env, std::function<void()> body, std::uint64_t time_ns,
                       typename E::Thread& thread, typename E::Mutex& mutex, typename E::CondVar& condition,
                       std::unique_lock<typename E::Mutex>& lock) {
  { env.now_ns() } -> std::same_as<std::uint64_t>;
  env.sleep_until(time_ns);
  env.yield();
  { env.spawn(std::move(body)) } -> std::same_as<typename E::Thread>;
  env.join(thread);
  mutex.lock();
  mutex.unlock();
  condition.wait(lock);
  condition.notify_one();
  condition.notify_all();
};

class RealEnv {
 public:
  using Mutex = std::mutex;

  class CondVar {
   public:
    void wait(std::unique_lock<Mutex>& lock) { condition_.wait(lock); }
    void notify_one() { condition_.notify_one(); }
    void notify_all() { condition_.notify_all(); }

   private:
    std::condition_variable condition_;
  };

  class Thread {
   public:
    Thread() = default;
    explicit Thread(std::thread thread) : thread_(std::move(thread)) {}
    std::thread& native() { return thread_; }

   private:
    std::thread thread_;
  };

  std::uint64_t now_ns() const {
    const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
  }
  void sleep_until(std::uint64_t time_ns) {
    const std::uint64_t now = now_ns();
    if (time_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(time_ns - now));
  }
  void yield() { std::this_thread::yield(); }
  Thread spawn(std::function<void()> body) { return Thread(std::thread(std::move(body))); }
  void join(Thread& thread) {
    if (thread.native().joinable()) thread.native().join();
  }
};

static_assert(Env<RealEnv>);

}  // namespace quiesce
