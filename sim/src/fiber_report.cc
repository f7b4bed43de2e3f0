// Failure reports of sim::FiberEnv: what went wrong, and for every unfinished fiber what it waits on, in
// sentences a person can act on ("fiber 1 'consumer' waits on mutex #2 'queue' held by fiber 0 'producer'").
#include <cassert>
#include <string>
#include <utility>

#include "fiber_env_internal.h"
#include "quiesce/sim/fiber_env.h"

namespace quiesce::sim {

namespace {

std::string object_text(std::string_view kind, std::uint32_t object_id, std::string_view name) {
  std::string text = std::string(kind) + " #" + std::to_string(object_id);
  if (!name.empty()) text += " '" + std::string(name) + "'";
  return text;
}

std::string deadline_text(std::uint64_t deadline_ns) {
  if (deadline_ns == VirtualClock::kNever) return "with no deadline";
  return "until " + std::to_string(deadline_ns) + " ns";
}

}  // namespace

std::string_view to_string(RunFailureKind kind) {
  switch (kind) {
    case RunFailureKind::Deadlock: return "deadlock";
    case RunFailureKind::StepBound: return "step bound";
    case RunFailureKind::ClockBound: return "clock bound";
    case RunFailureKind::ReplayDiverged: return "replay diverged";
    case RunFailureKind::FiberThrew: return "fiber threw";
    case RunFailureKind::Misuse: return "misuse";
  }
  return "unknown failure";
}

std::string RunFailure::report() const {
  std::string text = std::string(to_string(kind)) + ": " + message;
  if (fibers.empty()) return text + "\n  (no fiber was left unfinished)";
  for (const FiberState& fiber : fibers) {
    text += "\n  fiber " + std::to_string(fiber.id) + " '" + fiber.name + "' " + fiber.state;
  }
  return text;
}

std::string FiberEnv::describe_fiber(FiberId fiber) const {
  if (fiber == kHeldOutsideFibers) return "main (outside every fiber)";
  if (fiber >= fibers_.size()) return std::to_string(fiber) + " (unknown)";
  return std::to_string(fiber) + " '" + fibers_[fiber]->name + "'";
}

std::string FiberEnv::describe_state(const Fiber& fiber) const {
  switch (fiber.wait) {
    case FiberWait::None: return &fiber == current_ ? "is running" : "is runnable";
    case FiberWait::Finished: return "has finished";
    case FiberWait::Mutex: {
      assert(fiber.wait_mutex != nullptr);
      const Mutex& mutex = *fiber.wait_mutex;
      const std::string holder = mutex.owner_ == kNoFiber ? std::string("which is free (a wakeup is due)")
                                                          : "held by fiber " + describe_fiber(mutex.owner_);
      return "waits on " + object_text("mutex", mutex.object_id_, mutex.name_) + " " + holder;
    }
    case FiberWait::Condition: {
      assert(fiber.wait_condition != nullptr);
      std::string text = "waits on " + object_text("condition", fiber.wait_condition->object_id_,
                                                   fiber.wait_condition->name_);
      if (fiber.wait_mutex != nullptr) {
        text += " (to re-take " + object_text("mutex", fiber.wait_mutex->object_id_, fiber.wait_mutex->name_) + ")";
      }
      return text;
    }
    case FiberWait::Join: return "waits to join fiber " + describe_fiber(fiber.wait_join);
    case FiberWait::Sleep: return "sleeps " + deadline_text(fiber.wake_ns);
    case FiberWait::Device:
      return "waits on the device (a blocking wait_event, synchronize or admission wait) " +
             deadline_text(fiber.wake_ns);
  }
  return "is in an unknown state";
}

void FiberEnv::fail(RunFailureKind kind, std::string message) {
  if (failure_ || tearing_down_) return;  // the first failure is the one reported
  RunFailure failure;
  failure.kind = kind;
  failure.step = steps_;
  failure.time_ns = clock_->now_ns();
  failure.message = std::move(message);
  for (const std::unique_ptr<Fiber>& fiber : fibers_) {
    if (fiber->wait == FiberWait::Finished) continue;
    failure.fibers.push_back(FiberState{fiber->id, fiber->name, describe_state(*fiber)});
  }
  failure_ = std::move(failure);
}

}  // namespace quiesce::sim
