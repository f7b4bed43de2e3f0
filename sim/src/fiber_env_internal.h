// The private record of one simulated host thread, shared by the FiberEnv sources (fiber_env.cc,
// fiber_sync.cc, fiber_report.cc). Not installed: nothing outside sim/src sees Boost.Context.
#pragma once

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <cstddef>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "quiesce/sim/fiber_env.h"

namespace quiesce::sim {

// What a fiber waits on; None means it is runnable (or running).
enum class FiberWait : std::uint8_t { None, Mutex, Condition, Join, Sleep, Device, Finished };

// Owner of a mutex locked outside every fiber (set-up code before run()).
inline constexpr FiberId kHeldOutsideFibers = kNoFiber - 1;

struct FiberEnv::Fiber {
  FiberId id = kNoFiber;
  std::string name;
  std::function<void()> body;
  boost::context::fiber context;  // empty while running and once finished
  boost::context::stack_context stack{};  // while allocated; freed by Boost.Context when the fiber ends
  bool started = false;
  FiberWait wait = FiberWait::None;
  Mutex* wait_mutex = nullptr;        // Mutex, and the mutex a Condition wait gave up
  CondVar* wait_condition = nullptr;  // Condition
  std::vector<Mutex*> held;           // mutexes this fiber owns, released if the fiber is abandoned
  FiberId wait_join = kNoFiber;             // Join
  std::uint64_t wake_ns = VirtualClock::kNever;  // Sleep, and a Device wait's deadline
  bool (*device_done)(const void* context) = nullptr;
  const void* device_context = nullptr;
  std::vector<FiberId> joiners;
  // An abandoned fiber's continuation is moved here and never destroyed: destroying it would unwind the
  // stack, and a fiber suspended inside a destructor (a unique_lock's unlock, a join in ~Worker) cannot
  // take an exception there without std::terminate.
  alignas(boost::context::fiber) std::byte abandoned[sizeof(boost::context::fiber)];
};

// Guard-paged stacks that tell their fiber record where they are, so teardown can free the stack of a
// fiber it abandons without unwinding it. A finished fiber's stack goes back to its env's cache (up to
// kStackCacheMax) for the next spawn: mapping a stack and its guard page costs microseconds, reusing one
// nothing.
class RecordedStack {
 public:
  static constexpr std::size_t kStackCacheMax = 64;

  RecordedStack(FiberEnv& env, FiberEnv::Fiber* owner) : env_(&env), owner_(owner) {}

  boost::context::stack_context allocate() {
    std::vector<FiberEnv::CachedStack>& cache = env_->stack_cache_;
    if (cache.empty()) {
      owner_->stack = boost::context::protected_fixedsize_stack(env_->options_.stack_bytes).allocate();
    } else {
      owner_->stack = boost::context::stack_context{};
      owner_->stack.sp = cache.back().sp;
      owner_->stack.size = cache.back().size;
      cache.pop_back();
    }
    return owner_->stack;
  }

  void deallocate(boost::context::stack_context& stack) noexcept {
    std::vector<FiberEnv::CachedStack>& cache = env_->stack_cache_;
    if (cache.size() < kStackCacheMax && cache.capacity() > cache.size()) {
      cache.push_back(FiberEnv::CachedStack{stack.sp, stack.size});  // no allocation: capacity was checked
    } else {
      boost::context::protected_fixedsize_stack(env_->options_.stack_bytes).deallocate(stack);
    }
    owner_->stack = boost::context::stack_context{};
  }

  // Unmaps a stack for good (abandoned fibers, and the cache when the env goes).
  static void unmap(std::size_t stack_bytes, void* sp, std::size_t size) {
    boost::context::stack_context stack{};
    stack.sp = sp;
    stack.size = size;
    boost::context::protected_fixedsize_stack(stack_bytes).deallocate(stack);
  }

 private:
  FiberEnv* env_;
  FiberEnv::Fiber* owner_;
};

}  // namespace quiesce::sim
