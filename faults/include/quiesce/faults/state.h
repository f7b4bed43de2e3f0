// What one Injector carries besides its inner backend: the Decider (plan, Prng, counters, log) and the
// Tracker (handle owners, per-event reports, lost contexts, limbo). The family modules operate on it.
#pragma once

#include <utility>

#include "quiesce/faults/decider.h"
#include "quiesce/faults/tracker.h"

namespace quiesce::faults {

struct InjectorState {
  explicit InjectorState(Plan plan) : decider(std::move(plan)) {}

  Decider decider;
  Tracker tracker;
};

}  // namespace quiesce::faults
