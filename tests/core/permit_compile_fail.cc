// Must NOT compile: user code constructs an AllocationPermit outside a ResourceTransaction.
// The ctest core.permit_compile_fail runs the compiler on this file and passes only if compilation fails
// with a diagnostic about the private constructor. permit_compile_ok.cc is the positive control.
#include "quiesce/core/permit.h"

quiesce::BufferDesc forged_request() { return quiesce::BufferDesc{.bytes = 1U << 20}; }

std::uint64_t forge_a_permit() {
  const quiesce::AllocationPermit forged(forged_request(), 1);  // the private constructor
  return forged.desc().bytes;
}
