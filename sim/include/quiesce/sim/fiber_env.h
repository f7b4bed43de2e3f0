// sim::FiberEnv — simulated host threads: fibers on one OS thread (Boost.Context), scheduled by a seeded
// sim::Schedule, on the simulator's virtual clock. It satisfies quiesce::Env (core/env.h), so code written
// against that concept (a completion poller, a submitter, a releaser) runs here unchanged and every
// interleaving it takes is chosen, recorded and replayable.
//
// Switch points are every Env call: yield, spawn, join, sleep_until, Mutex lock/unlock, CondVar wait and
// notify, and a device wait through waiter(). Nothing between two switch points is interleaved, so a race
// is found only if the code under test reaches a switch point inside its critical window (as real code does
// at every lock, notify or device call). Blocking calls park the fiber instead of the OS thread; when no
// fiber can run, the clock moves to its next event or to the earliest sleep or wait deadline, whichever
// comes first (sleeps and deadlines are kept here, never left on the clock to outlive the env). When no fiber can run and no event is pending, that is a deadlock; when a run exceeds its
// step bound, a livelock: either way run() returns a RunFailure naming every fiber and what it waits on,
// never a hang.
//
// The Env concept asks for default-constructible Mutex and CondVar (as std::mutex is), so they find their
// scheduler as the one running on the calling OS thread: run() marks itself active for its duration and
// restores the previous one after. No process-wide state: two FiberEnvs run side by side on two threads.
//
// Use:
//   VirtualClock clock;
//   FiberEnv env(clock, Schedule::from_seed(seed));
//   device.set_waiter(&env.waiter());
//   env.spawn("poller", [&] { ... });
//   auto result = env.run();   // RunSummary, or RunFailure with report()
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/env.h"
#include "quiesce/core/result.h"
#include "quiesce/sim/clock.h"
#include "quiesce/sim/schedule.h"

namespace quiesce::sim {

struct FiberEnvOptions {
  std::uint64_t steps_max = 1'000'000;           // switch points in one run before it is called a livelock
  std::uint64_t clock_events_max = 10'000'000;   // clock moves in one idle period that wake no fiber
  std::size_t fibers_max = 4096;                 // fibers spawned over the env's life
  std::size_t stack_bytes = 256 * 1024;          // per fiber, with a guard page below it
};

enum class RunFailureKind : std::uint8_t {
  Deadlock,        // every unfinished fiber is blocked and no clock event is pending
  StepBound,       // steps_max switch points without finishing: a livelock or an unbounded workload
  ClockBound,      // the clock moved clock_events_max times while every fiber stayed blocked
  ReplayDiverged,  // a replayed decision list stopped matching the run
  FiberThrew,      // a fiber's body ended with an exception
  Misuse,          // an Env call broke its contract (unlocking a mutex held by another fiber, ...)
};

std::string_view to_string(RunFailureKind kind);

// One unfinished fiber in a failure report.
struct FiberState {
  FiberId id = kNoFiber;
  std::string name;
  std::string state;  // "waits on mutex #1 'queue' held by fiber 0 'producer'", "is runnable", ...
};

struct RunFailure {
  RunFailureKind kind = RunFailureKind::Deadlock;
  std::uint64_t step = 0;
  std::uint64_t time_ns = 0;
  std::string message;             // one sentence: what went wrong, where
  std::vector<FiberState> fibers;  // every fiber that had not finished, in id order
  // The message, then one line per unfinished fiber.
  std::string report() const;
};

struct RunSummary {
  std::uint64_t steps = 0;     // switch points reached
  std::uint64_t switches = 0;  // context switches made
  std::size_t decisions = 0;   // choices recorded (switch points with two or more runnable fibers)
  std::size_t fibers = 0;      // fibers spawned
  std::uint64_t device_waits = 0;  // device waits through waiter() that parked their fiber
  std::uint64_t clock_jumps = 0;   // times every fiber was blocked and the clock moved to its next event
  std::uint64_t end_time_ns = 0;
  std::uint64_t digest = 0;    // of the interleaving: equal for equal seeds, equal for a faithful replay
};

// Told of every recorded scheduling decision and every clock jump, in order, so that a trace recorder can
// interleave them with backend calls (traces::Recorder::record_schedule takes the chosen fiber and the
// number runnable). Called on the running fiber's stack: it must not call the Env.
class ScheduleObserver {
 public:
  ScheduleObserver() = default;
  ScheduleObserver(const ScheduleObserver&) = default;
  ScheduleObserver& operator=(const ScheduleObserver&) = default;
  virtual ~ScheduleObserver() = default;
  virtual void on_decision(FiberId chosen, std::size_t runnable, std::uint64_t now_ns) = 0;
  virtual void on_clock_jump(std::uint64_t now_ns) = 0;
};

class FiberEnv {
 public:
  // A mutex between fibers. Usable with std::unique_lock. Not recursive; unlocking from a fiber that does
  // not hold it is a Misuse failure of the run.
  class Mutex {
   public:
    Mutex() = default;
    // `name` must outlive the mutex (a string literal): it appears in deadlock reports.
    explicit Mutex(std::string_view name) : name_(name) {}
    Mutex(const Mutex&) = delete;
    Mutex& operator=(const Mutex&) = delete;

    void lock();
    bool try_lock();
    void unlock();

   private:
    friend class FiberEnv;
    FiberId owner_ = kNoFiber;
    std::uint32_t object_id_ = 0;  // numbered on first use by a run, for reports
    std::string_view name_;
    std::vector<FiberId> waiters_;  // FIFO; bounded by the number of fibers
  };

  // A condition variable between fibers. No spurious wakeups, but callers should loop on their predicate
  // anyway (the code must also run on RealEnv).
  class CondVar {
   public:
    CondVar() = default;
    explicit CondVar(std::string_view name) : name_(name) {}
    CondVar(const CondVar&) = delete;
    CondVar& operator=(const CondVar&) = delete;

    void wait(std::unique_lock<Mutex>& lock);
    void notify_one();
    void notify_all();

   private:
    friend class FiberEnv;
    std::uint32_t object_id_ = 0;
    std::string_view name_;
    std::vector<FiberId> waiters_;  // FIFO; bounded by the number of fibers
  };

  class Thread {
   public:
    Thread() = default;
    FiberId id() const { return id_; }
    bool joinable() const { return id_ != kNoFiber; }

   private:
    friend class FiberEnv;
    explicit Thread(FiberId id) : id_(id) {}
    FiberId id_ = kNoFiber;
  };

  FiberEnv(VirtualClock& clock, Schedule schedule, FiberEnvOptions options = {});
  ~FiberEnv();
  FiberEnv(const FiberEnv&) = delete;
  FiberEnv& operator=(const FiberEnv&) = delete;

  // quiesce::Env. Outside every fiber (before run), sleep_until runs the clock and yield does nothing.
  std::uint64_t now_ns() const { return clock_->now_ns(); }
  void sleep_until(std::uint64_t time_ns);
  void yield();
  Thread spawn(std::function<void()> body);
  Thread spawn(std::string name, std::function<void()> body);
  void join(Thread& thread);

  // Runs every spawned fiber until all have finished (RunSummary) or the run fails (RunFailure: deadlock,
  // livelock, a diverged replay, an exception). After a failure the fibers left blocked are abandoned: the
  // mutexes they held are released and their stacks freed, but the destructors of their frames do not run
  // (a fiber blocked inside a destructor cannot be unwound safely). Every later run() returns the same
  // failure.
  Result<RunSummary, RunFailure> run();

  // nullptr stops the notifications. The observer must outlive the runs it observes.
  void set_observer(ScheduleObserver* observer) { observer_ = observer; }

  // Hand to sim::Device::set_waiter: its blocking calls then park the calling fiber.
  Waiter& waiter() { return waiter_; }
  VirtualClock& clock() { return *clock_; }
  const Schedule& schedule() const { return schedule_; }
  const std::vector<FiberId>& decisions() const { return schedule_.decisions(); }
  // The schedule's describe() and the bounds, for a trace header.
  std::string describe() const;
  // Digest of every fiber run at every step, every clock move, the decision list and the end time; not of
  // the strategy, so a faithful replay has the original's digest.
  std::uint64_t digest() const;
  RunSummary summary() const;
  // The fiber now running, kNoFiber outside every fiber.
  FiberId current_fiber() const;
  std::string_view fiber_name(FiberId fiber) const;

 private:
  struct Fiber;
  struct CachedStack {
    void* sp = nullptr;  // the top, as Boost.Context's stack_context has it
    std::size_t size = 0;
  };
  friend struct FiberEntry;
  friend class RecordedStack;

  class FiberWaiter final : public Waiter {
   public:
    explicit FiberWaiter(FiberEnv& env) : env_(&env) {}
    bool wait_until(std::uint64_t deadline_ns, bool (*done)(const void* context), const void* context) override;

   private:
    FiberEnv* env_;
  };

  static FiberEnv* active();
  bool in_fiber() const;

  // Scheduling core (fiber_env.cc).
  void switch_point();
  void reschedule();
  Fiber* pick_next();
  void switch_to(Fiber* next);
  Fiber* finish_current();
  void make_runnable(FiberId fiber);
  void block_current();
  void wake_device_waiters();
  bool advance_clock_until_runnable();
  void wake_timed_waiters();
  std::uint64_t earliest_wake_ns() const;
  bool device_wait(std::uint64_t deadline_ns, bool (*done)(const void* context), const void* context);
  void teardown();
  void release_sync_objects(Fiber& fiber);

  // Mutex and CondVar (fiber_sync.cc).
  void mutex_lock(Mutex& mutex);
  void mutex_acquire_blocking(Mutex& mutex);
  void mutex_unlock(Mutex& mutex);
  void mutex_release(Mutex& mutex);
  void condition_wait(CondVar& condition, std::unique_lock<Mutex>& lock);
  void condition_notify(CondVar& condition, bool all);
  std::uint32_t number(std::uint32_t& object_id);

  // Failures and reports (fiber_report.cc).
  void fail(RunFailureKind kind, std::string message);
  std::string describe_state(const Fiber& fiber) const;
  std::string describe_fiber(FiberId fiber) const;

  VirtualClock* clock_;
  Schedule schedule_;
  FiberEnvOptions options_;
  std::vector<std::unique_ptr<Fiber>> fibers_;  // by FiberId; a finished fiber keeps its record
  std::unique_ptr<Fiber> main_;                 // the caller of run(), as a switch target
  Fiber* current_ = nullptr;
  Fiber* previous_ = nullptr;                   // the fiber that switched to current_
  std::vector<FiberId> runnable_;               // includes the running fiber while it can run
  std::vector<FiberId> device_waiters_;
  std::vector<FiberId> timed_waiters_;          // sleepers and device waits with a deadline
  std::vector<CachedStack> stack_cache_;        // stacks of finished fibers, for the next spawn
  std::size_t live_ = 0;                        // spawned and not finished
  std::uint64_t steps_ = 0;
  std::uint64_t run_start_steps_ = 0;
  std::uint64_t switches_ = 0;
  std::uint64_t device_waits_ = 0;
  std::uint64_t clock_jumps_ = 0;
  std::uint64_t interleaving_hash_ = 0;
  std::uint32_t objects_numbered_ = 0;
  std::optional<RunFailure> failure_;
  bool running_ = false;
  bool tearing_down_ = false;
  FiberEnv* outer_active_ = nullptr;
  ScheduleObserver* observer_ = nullptr;
  FiberWaiter waiter_{*this};
};

static_assert(Env<FiberEnv>);

}  // namespace quiesce::sim
