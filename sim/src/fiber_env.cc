// The scheduling core of sim::FiberEnv: spawning fibers, switching between them at switch points, jumping
// the virtual clock when none can run, and abandoning what is left blocked after a failed run.
//
// Switches are symmetric: the fiber that reaches a switch point picks the next one and resumes it directly
// (one Boost.Context jump, no trip through a scheduler fiber). The resumed side stores the continuation it
// receives into the record of the fiber that switched to it (previous_).
#include <algorithm>
#include <cassert>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "fiber_env_internal.h"
#include "quiesce/core/digest.h"
#include "quiesce/sim/fiber_env.h"

namespace quiesce::sim {

namespace {

// The FiberEnv whose run() is active on this OS thread; how a default-constructed Mutex finds its scheduler.
thread_local FiberEnv* active_env = nullptr;

constexpr std::uint64_t kHashPrime = 0x100000001B3ULL;

void erase_fiber(std::vector<FiberId>& fibers, FiberId fiber) {
  const auto position = std::find(fibers.begin(), fibers.end(), fiber);
  assert(position != fibers.end());
  if (position != fibers.end()) fibers.erase(position);
}

}  // namespace

// The body of every fiber: runs the user's function, turns an escaping exception into a run failure, and
// hands control to the next fiber by returning its continuation.
struct FiberEntry {
  FiberEnv* env;
  FiberEnv::Fiber* fiber;

  boost::context::fiber operator()(boost::context::fiber&& caller) const {
    env->previous_->context = std::move(caller);
    fiber->started = true;
    try {
      fiber->body();
    } catch (const boost::context::detail::forced_unwind&) {
      throw;  // Boost.Context's own unwinding must pass through untouched
    } catch (const std::exception& error) {
      env->fail(RunFailureKind::FiberThrew,
                "fiber " + env->describe_fiber(fiber->id) + " ended with an exception: " + error.what());
    } catch (...) {
      env->fail(RunFailureKind::FiberThrew,
                "fiber " + env->describe_fiber(fiber->id) + " ended with an exception that is not a std::exception");
    }
    fiber->body = nullptr;  // its captures die here, on the fiber, while Env calls still work
    FiberEnv::Fiber* next = env->finish_current();
    return std::move(next->context);
  }
};

FiberEnv* FiberEnv::active() { return active_env; }

FiberEnv::FiberEnv(VirtualClock& clock, Schedule schedule, FiberEnvOptions options)
    : clock_(&clock), schedule_(std::move(schedule)), options_(options), main_(std::make_unique<Fiber>()) {
  assert(options_.steps_max > 0);
  assert(options_.fibers_max > 0 && options_.fibers_max < kHeldOutsideFibers);
  main_->name = "main";
  current_ = main_.get();
  fibers_.reserve(std::min<std::size_t>(options_.fibers_max, 64));
  runnable_.reserve(64);
  stack_cache_.reserve(RecordedStack::kStackCacheMax);
}

FiberEnv::~FiberEnv() {
  assert(!running_);
  // Fibers spawned but never run (or left blocked) still own stacks: free them as a failed run does.
  FiberEnv* const outer = active_env;
  active_env = this;
  teardown();
  active_env = outer;
  for (const CachedStack& stack : stack_cache_) RecordedStack::unmap(options_.stack_bytes, stack.sp, stack.size);
  stack_cache_.clear();
}

bool FiberEnv::in_fiber() const { return (running_ || tearing_down_) && current_ != main_.get(); }

FiberId FiberEnv::current_fiber() const { return in_fiber() ? current_->id : kNoFiber; }

std::string_view FiberEnv::fiber_name(FiberId fiber) const {
  if (fiber >= fibers_.size()) return "main";
  return fibers_[fiber]->name;
}

FiberEnv::Thread FiberEnv::spawn(std::function<void()> body) { return spawn(std::string(), std::move(body)); }

FiberEnv::Thread FiberEnv::spawn(std::string name, std::function<void()> body) {
  assert(body != nullptr);
  if (tearing_down_ || failure_) return Thread{};
  if (fibers_.size() >= options_.fibers_max) {
    fail(RunFailureKind::Misuse, "spawning '" + name + "' was refused: the env already has " +
                                     std::to_string(fibers_.size()) + " fibers, its bound (fibers_max)");
    if (in_fiber()) reschedule();
    return Thread{};
  }
  const auto id = static_cast<FiberId>(fibers_.size());
  auto fiber = std::make_unique<Fiber>();
  fiber->id = id;
  fiber->name = name.empty() ? "fiber-" + std::to_string(id) : std::move(name);
  fiber->body = std::move(body);
  fiber->context = boost::context::fiber(std::allocator_arg,
                                         RecordedStack(*this, fiber.get()),
                                         FiberEntry{this, fiber.get()});
  fibers_.push_back(std::move(fiber));
  runnable_.push_back(id);
  ++live_;
  schedule_.on_spawn(id);
  if (in_fiber()) switch_point();  // the child may run before the parent continues
  return Thread(id);
}

void FiberEnv::yield() {
  if (!in_fiber() || tearing_down_) return;
  // Not switch_point(): yield is the hot path, and an explicit yield during unwinding is the caller's
  // choice, unlike the unlock a unique_lock's destructor makes.
  reschedule();
}

void FiberEnv::sleep_until(std::uint64_t time_ns) {
  if (!in_fiber()) {
    clock_->advance_to(time_ns);  // set-up code outside every fiber: nothing else could run meanwhile
    return;
  }
  if (tearing_down_) return;
  if (time_ns <= clock_->now_ns()) {
    switch_point();
    return;
  }
  Fiber& self = *current_;
  self.wait = FiberWait::Sleep;
  self.wake_ns = time_ns;
  block_current();
  timed_waiters_.push_back(self.id);
  reschedule();
  assert(self.wait == FiberWait::None);
}

void FiberEnv::join(Thread& thread) {
  if (!thread.joinable() || tearing_down_) return;
  if (thread.id_ >= fibers_.size()) {
    fail(RunFailureKind::Misuse, "join of fiber " + std::to_string(thread.id_) + ", which this env never spawned");
    if (in_fiber()) reschedule();
    return;
  }
  Fiber& target = *fibers_[thread.id_];
  if (!in_fiber()) {
    if (target.wait != FiberWait::Finished) {
      fail(RunFailureKind::Misuse, "join of unfinished fiber " + describe_fiber(target.id) +
                                       " outside every fiber, where nothing can wait; call run() first");
    }
    thread = Thread{};
    return;
  }
  Fiber& self = *current_;
  if (&target == &self) {
    fail(RunFailureKind::Misuse, "fiber " + describe_fiber(self.id) + " joins itself, which can never finish");
    reschedule();
    return;
  }
  if (target.wait != FiberWait::Finished) {
    target.joiners.push_back(self.id);
    self.wait = FiberWait::Join;
    self.wait_join = target.id;
    block_current();
    reschedule();
  } else {
    switch_point();
  }
  assert(target.wait == FiberWait::Finished);
  thread = Thread{};
}

Result<RunSummary, RunFailure> FiberEnv::run() {
  if (running_) {
    fail(RunFailureKind::Misuse, "run() was called from inside fiber " + describe_fiber(current_->id) +
                                     " of the same env; a run cannot nest");
    reschedule();
    return *failure_;
  }
  if (failure_) return *failure_;
  outer_active_ = active_env;
  active_env = this;
  running_ = true;
  run_start_steps_ = steps_;
  assert(current_ == main_.get());
  Fiber* first = pick_next();
  if (first != main_.get()) switch_to(first);
  running_ = false;
  assert(current_ == main_.get());
  if (!failure_ && schedule_.replay_remaining() > 0) {
    fail(RunFailureKind::ReplayDiverged, "replay diverged: the run finished with " +
                                             std::to_string(schedule_.replay_remaining()) +
                                             " recorded decisions unused");
  }
  if (failure_) teardown();
  active_env = outer_active_;
  if (failure_) return *failure_;
  return summary();
}

// A switch point where the fiber need not block. Skipped while an exception propagates on this fiber: a
// destructor releasing a lock during unwinding must not let another fiber throw or catch meanwhile, since
// the C++ runtime keeps one exception state per OS thread, not per fiber.
void FiberEnv::switch_point() {
  if (std::uncaught_exceptions() > 0) return;
  reschedule();
}

void FiberEnv::reschedule() {
  if (tearing_down_) return;  // destructors running during teardown must not switch
  Fiber* next = pick_next();
  if (next != current_) switch_to(next);
}

FiberEnv::Fiber* FiberEnv::pick_next() {
  ++steps_;
  if (failure_) return main_.get();
  if (steps_ - run_start_steps_ > options_.steps_max) {
    fail(RunFailureKind::StepBound, "livelock suspected at virtual time " + std::to_string(clock_->now_ns()) +
                                        " ns: the run reached its bound of " + std::to_string(options_.steps_max) +
                                        " switch points (steps_max) with " + std::to_string(live_) +
                                        " fibers unfinished");
    return main_.get();
  }
  if (!device_waiters_.empty()) wake_device_waiters();
  if (runnable_.empty()) {
    if (live_ == 0) return main_.get();
    if (!advance_clock_until_runnable()) return main_.get();
  }
  FiberId chosen = runnable_.front();
  if (runnable_.size() > 1) {
    const FiberId current = current_ == main_.get() ? kNoFiber : current_->id;
    chosen = schedule_.choose(runnable_, current, steps_);
    if (chosen == kNoFiber) {
      fail(RunFailureKind::ReplayDiverged, schedule_.divergence());
      return main_.get();
    }
    if (observer_ != nullptr) observer_->on_decision(chosen, runnable_.size(), clock_->now_ns());
  }
  interleaving_hash_ = (interleaving_hash_ ^ chosen) * kHashPrime;
  return fibers_[chosen].get();
}

void FiberEnv::switch_to(Fiber* next) {
  assert(next != current_);
  assert(next == main_.get() || next->wait == FiberWait::None);
  previous_ = current_;
  current_ = next;
  ++switches_;
  boost::context::fiber back = std::move(next->context).resume();
  // Resumed by previous_, whose continuation is `back` (empty when previous_ has finished).
  previous_->context = std::move(back);
}

FiberEnv::Fiber* FiberEnv::finish_current() {
  Fiber& self = *current_;
  assert(&self != main_.get());
  assert(self.wait == FiberWait::None);
  if (!self.held.empty()) {
    fail(RunFailureKind::Misuse, "fiber " + describe_fiber(self.id) + " finished while holding mutex #" +
                                     std::to_string(number(self.held.front()->object_id_)) +
                                     ", which no other fiber can ever take");
  }
  block_current();
  self.wait = FiberWait::Finished;
  --live_;
  for (const FiberId joiner : self.joiners) make_runnable(joiner);
  self.joiners.clear();
  Fiber* next = pick_next();
  previous_ = &self;
  current_ = next;
  ++switches_;
  return next;
}

void FiberEnv::make_runnable(FiberId fiber) {
  Fiber& record = *fibers_[fiber];
  assert(record.wait != FiberWait::None);
  assert(record.wait != FiberWait::Finished);
  if (record.wait == FiberWait::Device) erase_fiber(device_waiters_, fiber);
  if (record.wake_ns != VirtualClock::kNever) erase_fiber(timed_waiters_, fiber);
  record.wait = FiberWait::None;
  record.wait_mutex = nullptr;
  record.wait_condition = nullptr;
  record.wait_join = kNoFiber;
  record.wake_ns = VirtualClock::kNever;
  runnable_.push_back(fiber);
}

// Takes the running fiber off the runnable list; its caller has already recorded what it waits on.
void FiberEnv::block_current() { erase_fiber(runnable_, current_->id); }

void FiberEnv::wake_device_waiters() {
  // make_runnable erases the woken fiber at `index`, so the index only moves past fibers left waiting.
  for (std::size_t index = 0; index < device_waiters_.size();) {
    const Fiber& record = *fibers_[device_waiters_[index]];
    if (record.device_done(record.device_context)) {
      make_runnable(record.id);
    } else {
      ++index;
    }
  }
}

// Sleeps and device-wait deadlines are not clock events (a timer left behind by a wait that ended early
// would outlive the env); the scheduler moves the clock to whichever comes first, a clock event or the
// earliest wake time, and events due at a wake time fire before the fibers waking then run.
bool FiberEnv::advance_clock_until_runnable() {
  assert(runnable_.empty());
  for (std::uint64_t jumps = 0; runnable_.empty(); ++jumps) {
    if (jumps == options_.clock_events_max) {
      fail(RunFailureKind::ClockBound, "the clock moved " + std::to_string(jumps) +
                                           " times (clock_events_max) up to virtual time " +
                                           std::to_string(clock_->now_ns()) + " ns without waking any of the " +
                                           std::to_string(live_) + " blocked fibers");
      return false;
    }
    const std::uint64_t wake_ns = earliest_wake_ns();
    const std::uint64_t event_ns = clock_->next_event_ns();
    if (wake_ns == VirtualClock::kNever && event_ns == VirtualClock::kNever) {
      fail(RunFailureKind::Deadlock, "all " + std::to_string(live_) + " unfinished fibers are blocked at step " +
                                         std::to_string(steps_) + ", virtual time " +
                                         std::to_string(clock_->now_ns()) + " ns, and no clock event is pending");
      return false;
    }
    clock_->advance_to(std::min(wake_ns, event_ns));
    ++clock_jumps_;
    interleaving_hash_ = (interleaving_hash_ ^ clock_->now_ns()) * kHashPrime;
    if (observer_ != nullptr) observer_->on_clock_jump(clock_->now_ns());
    if (!timed_waiters_.empty()) wake_timed_waiters();
    if (!device_waiters_.empty()) wake_device_waiters();
  }
  return true;
}

std::uint64_t FiberEnv::earliest_wake_ns() const {
  std::uint64_t earliest = VirtualClock::kNever;
  for (const FiberId fiber : timed_waiters_) earliest = std::min(earliest, fibers_[fiber]->wake_ns);
  return earliest;
}

void FiberEnv::wake_timed_waiters() {
  // make_runnable erases the woken fiber at `index`, so the index only moves past fibers left waiting.
  const std::uint64_t now = clock_->now_ns();
  for (std::size_t index = 0; index < timed_waiters_.size();) {
    const Fiber& record = *fibers_[timed_waiters_[index]];
    if (record.wake_ns <= now) {
      make_runnable(record.id);
    } else {
      ++index;
    }
  }
}

bool FiberEnv::FiberWaiter::wait_until(std::uint64_t deadline_ns, bool (*done)(const void* context),
                                       const void* context) {
  return env_->device_wait(deadline_ns, done, context);
}

bool FiberEnv::device_wait(std::uint64_t deadline_ns, bool (*done)(const void* context), const void* context) {
  assert(done != nullptr);
  if (!in_fiber()) return ClockWaiter(*clock_).wait_until(deadline_ns, done, context);
  if (tearing_down_) return done(context);
  switch_point();  // a blocking device call is a switch point even when it does not block
  // Each round blocks until done() may have changed or the deadline passed; the step bound ends the run
  // if it never settles.
  while (!done(context)) {
    if (clock_->now_ns() >= deadline_ns) return false;
    Fiber& self = *current_;
    self.wait = FiberWait::Device;
    self.wake_ns = deadline_ns;
    self.device_done = done;
    self.device_context = context;
    block_current();
    ++device_waits_;
    device_waiters_.push_back(self.id);
    if (deadline_ns != VirtualClock::kNever) timed_waiters_.push_back(self.id);
    reschedule();
  }
  return true;
}

void FiberEnv::teardown() {
  tearing_down_ = true;
  // A fiber that never started is destroyed: Boost.Context unwinds it without running any user code. A
  // started, blocked fiber is abandoned instead (see Fiber::abandoned): first every mutex it holds and every
  // wait list it is on is put right, for all of them, then their stacks are freed. The frames' destructors
  // never run, so what they alone own on the heap is lost; a failed run is the only way here.
  for (const std::unique_ptr<Fiber>& fiber : fibers_) {
    if (fiber->context && fiber->started) release_sync_objects(*fiber);
  }
  for (const std::unique_ptr<Fiber>& fiber : fibers_) {
    if (!fiber->context) continue;
    if (fiber->started) {
      const boost::context::stack_context stack = fiber->stack;
      new (fiber->abandoned) boost::context::fiber(std::move(fiber->context));
      assert(stack.sp != nullptr);
      RecordedStack::unmap(options_.stack_bytes, stack.sp, stack.size);
      fiber->stack = boost::context::stack_context{};
    } else {
      boost::context::fiber doomed = std::move(fiber->context);
    }
    if (fiber->wait != FiberWait::Finished) --live_;
    fiber->wait = FiberWait::Finished;
    fiber->body = nullptr;
  }
  assert(live_ == 0);
  runnable_.clear();
  device_waiters_.clear();
  timed_waiters_.clear();
  tearing_down_ = false;
}

void FiberEnv::release_sync_objects(Fiber& fiber) {
  for (Mutex* mutex : fiber.held) {
    if (mutex->owner_ == fiber.id) mutex->owner_ = kNoFiber;
  }
  fiber.held.clear();
  auto forget = [&fiber](std::vector<FiberId>& waiters) {
    waiters.erase(std::remove(waiters.begin(), waiters.end(), fiber.id), waiters.end());
  };
  if (fiber.wait == FiberWait::Mutex) forget(fiber.wait_mutex->waiters_);
  if (fiber.wait == FiberWait::Condition) forget(fiber.wait_condition->waiters_);
}

RunSummary FiberEnv::summary() const {
  RunSummary result;
  result.steps = steps_;
  result.switches = switches_;
  result.decisions = schedule_.decisions().size();
  result.fibers = fibers_.size();
  result.device_waits = device_waits_;
  result.clock_jumps = clock_jumps_;
  result.end_time_ns = clock_->now_ns();
  result.digest = digest();
  return result;
}

std::uint64_t FiberEnv::digest() const {
  // The strategy itself is left out: a replay of a run has a different strategy and the same interleaving.
  Digest digest;
  digest.add(steps_);
  digest.add(switches_);
  digest.add(interleaving_hash_);
  digest.add(clock_->now_ns());
  digest.add(static_cast<std::uint64_t>(fibers_.size()));
  const std::vector<FiberId>& decisions = schedule_.decisions();
  digest.add_bytes(decisions.data(), decisions.size() * sizeof(FiberId));
  return digest.value();
}

std::string FiberEnv::describe() const {
  return schedule_.describe() + " steps_max=" + std::to_string(options_.steps_max) +
         " clock_events_max=" + std::to_string(options_.clock_events_max) +
         " fibers_max=" + std::to_string(options_.fibers_max) + " stack_bytes=" + std::to_string(options_.stack_bytes);
}

}  // namespace quiesce::sim
