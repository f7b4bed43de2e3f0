// FiberEnv::Mutex and FiberEnv::CondVar: blocking that parks a fiber instead of the OS thread.
//
// A lock is a switch point before it acquires and an unlock one after it releases, so the scheduler can
// interleave other fibers at both edges of a critical section. Unlock wakes the first waiter, which retries
// (another fiber may take the mutex first: the schedule decides). A condition wait releases the mutex and
// blocks in one step, with no switch point between them, as std::condition_variable promises.
//
// Outside every fiber (set-up code before run()) a free mutex can be taken and given back; a held one
// cannot be waited for there, which is reported on stderr and aborts, because no run exists to report into.
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fiber_env_internal.h"
#include "quiesce/sim/fiber_env.h"

namespace quiesce::sim {

void FiberEnv::Mutex::lock() {
  FiberEnv* env = active();
  if (env != nullptr && env->in_fiber()) {
    env->mutex_lock(*this);
    return;
  }
  if (owner_ != kNoFiber) {
    std::fprintf(stderr,
                 "quiesce: a FiberEnv::Mutex held by fiber %u was locked outside every fiber, where nothing can "
                 "wait for it to be released\n",
                 owner_);
    std::abort();
  }
  owner_ = kHeldOutsideFibers;
}

bool FiberEnv::Mutex::try_lock() {
  FiberEnv* env = active();
  const bool in_fiber = env != nullptr && env->in_fiber();
  if (in_fiber) env->switch_point();  // a switch point, as lock() is
  if (owner_ != kNoFiber) return false;
  owner_ = kHeldOutsideFibers;
  if (in_fiber) {
    owner_ = env->current_->id;
    env->current_->held.push_back(this);
    env->number(object_id_);
  }
  return true;
}

void FiberEnv::Mutex::unlock() {
  FiberEnv* env = active();
  if (env != nullptr && env->in_fiber()) {
    env->mutex_unlock(*this);
    return;
  }
  if (owner_ != kHeldOutsideFibers) {
    std::fprintf(stderr, "quiesce: a FiberEnv::Mutex held by fiber %u was unlocked outside every fiber\n", owner_);
    std::abort();
  }
  owner_ = kNoFiber;
}

void FiberEnv::CondVar::wait(std::unique_lock<Mutex>& lock) {
  FiberEnv* env = active();
  if (env == nullptr || !env->in_fiber()) {
    std::fprintf(stderr, "quiesce: FiberEnv::CondVar::wait was called outside every fiber, where nothing can "
                         "notify it\n");
    std::abort();
  }
  env->condition_wait(*this, lock);
}

void FiberEnv::CondVar::notify_one() {
  FiberEnv* env = active();
  if (env != nullptr && env->in_fiber()) env->condition_notify(*this, false);
}

void FiberEnv::CondVar::notify_all() {
  FiberEnv* env = active();
  if (env != nullptr && env->in_fiber()) env->condition_notify(*this, true);
}

std::uint32_t FiberEnv::number(std::uint32_t& object_id) {
  if (object_id == 0) object_id = ++objects_numbered_;
  return object_id;
}

void FiberEnv::mutex_lock(Mutex& mutex) {
  Fiber& self = *current_;
  number(mutex.object_id_);
  if (tearing_down_) {
    mutex.owner_ = self.id;  // a destructor during teardown: nothing else runs, nothing may block
    self.held.push_back(&mutex);
    return;
  }
  if (mutex.owner_ == self.id) {
    fail(RunFailureKind::Misuse, "fiber " + describe_fiber(self.id) + " locked mutex #" +
                                     std::to_string(mutex.object_id_) + " which it already holds: a self-deadlock");
    reschedule();
    return;
  }
  switch_point();  // the switch point before acquiring
  mutex_acquire_blocking(mutex);
}

void FiberEnv::mutex_acquire_blocking(Mutex& mutex) {
  Fiber& self = *current_;
  // Each round is a switch point, so the step bound ends a run in which this never succeeds.
  while (mutex.owner_ != kNoFiber && !tearing_down_) {
    assert(mutex.owner_ != self.id);
    mutex.waiters_.push_back(self.id);
    self.wait = FiberWait::Mutex;
    self.wait_mutex = &mutex;
    block_current();
    reschedule();
  }
  mutex.owner_ = self.id;
  self.held.push_back(&mutex);
}

void FiberEnv::mutex_unlock(Mutex& mutex) {
  Fiber& self = *current_;
  if (tearing_down_) {
    if (mutex.owner_ == self.id) mutex_release(mutex);
    return;
  }
  if (mutex.owner_ != self.id) {
    const std::string holder =
        mutex.owner_ == kNoFiber ? std::string("nobody") : "fiber " + describe_fiber(mutex.owner_);
    fail(RunFailureKind::Misuse, "fiber " + describe_fiber(self.id) + " unlocked mutex #" +
                                     std::to_string(number(mutex.object_id_)) + " held by " + holder);
    reschedule();
    return;
  }
  mutex_release(mutex);
  switch_point();  // the switch point after releasing
}

void FiberEnv::mutex_release(Mutex& mutex) {
  assert(mutex.owner_ < fibers_.size());
  std::vector<Mutex*>& held = fibers_[mutex.owner_]->held;
  const auto position = std::find(held.begin(), held.end(), &mutex);
  assert(position != held.end());
  if (position != held.end()) held.erase(position);
  mutex.owner_ = kNoFiber;
  if (mutex.waiters_.empty()) return;
  const FiberId first = mutex.waiters_.front();
  mutex.waiters_.erase(mutex.waiters_.begin());
  assert(fibers_[first]->wait == FiberWait::Mutex);
  make_runnable(first);
}

void FiberEnv::condition_wait(CondVar& condition, std::unique_lock<Mutex>& lock) {
  Fiber& self = *current_;
  Mutex* mutex = lock.mutex();
  if (tearing_down_) return;
  if (mutex == nullptr || !lock.owns_lock() || mutex->owner_ != self.id) {
    fail(RunFailureKind::Misuse, "fiber " + describe_fiber(self.id) + " waited on condition #" +
                                     std::to_string(number(condition.object_id_)) +
                                     " without holding the mutex of its lock");
    reschedule();
    return;
  }
  number(condition.object_id_);
  condition.waiters_.push_back(self.id);
  self.wait = FiberWait::Condition;
  self.wait_condition = &condition;
  self.wait_mutex = mutex;
  block_current();
  mutex_release(*mutex);
  reschedule();  // returns once a notify made this fiber runnable
  mutex_acquire_blocking(*mutex);
}

void FiberEnv::condition_notify(CondVar& condition, bool all) {
  if (tearing_down_) return;
  std::size_t woken = 0;
  while (!condition.waiters_.empty() && (all || woken == 0)) {
    const FiberId waiter = condition.waiters_.front();
    condition.waiters_.erase(condition.waiters_.begin());
    assert(fibers_[waiter]->wait == FiberWait::Condition);
    make_runnable(waiter);
    ++woken;
  }
  assert(woken <= fibers_.size());
  switch_point();  // notify is a switch point: the woken fiber may run before the notifier continues
}

}  // namespace quiesce::sim
