// Whole-trace checks that decoding alone cannot make, run before anything is replayed.
//
// A decoded trace is well-formed record by record; validate_trace checks the sequence: every handle a call
// names was created by an earlier record (0 means "no handle" and is allowed), every fault names a call
// that already happened, clock and schedule records name the next call, and virtual time never goes back.
// A trace that fails here is refused whole: nothing of it is replayed.
#pragma once

#include <string>

#include "quiesce/traces/record.h"

namespace quiesce::traces {

TraceResult<void> validate_trace(const Trace& trace);

// read_trace_file, then validate_trace: the one way a command should load a trace it will act on.
TraceResult<Trace> load_trace(const std::string& path);

}  // namespace quiesce::traces
