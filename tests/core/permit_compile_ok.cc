// Must compile: the positive control of permit_compile_fail.cc. The same headers and the same request,
// used the legal way (reading a permit that a transaction handed over), so a failure of the negative test
// can only come from the forged construction.
#include "quiesce/core/permit.h"

quiesce::BufferDesc forged_request() { return quiesce::BufferDesc{.bytes = 1U << 20}; }

std::uint64_t read_a_permit(const quiesce::AllocationPermit& permit) {
  return permit.desc().bytes == forged_request().bytes ? permit.transaction_id() : 0;
}
