// The conformance suite: one set of typed tests written against the Backend concept only, instantiated for
// every backend stack (sim::Device, faults::Injector<...>, Validator<...>, cuda::Device).
//
// An instance file names a fixture (see conformance_support.h for what it provides) and instantiates:
//
//   #include "conformance_suite.h"
//   namespace quiesce::conformance {
//   struct SimFixture { ... };
//   QUIESCE_INSTANTIATE_CONFORMANCE(Sim, SimFixture);
//   }
//
// QUIESCE_INSTANTIATE_CONFORMANCE runs every suite. A stack that reports caller violations (a Validator)
// instantiates QUIESCE_INSTANTIATE_CONFORMANCE_LEGAL_USE, whose tests make only calls the contract allows
// (so zero violations is the expectation), and QUIESCE_INSTANTIATE_CONFORMANCE_MISUSE separately, whose
// tests each break one caller obligation on purpose. Several fixtures (for example one per fault plan) may
// be listed after the prefix. Every *_instance_test.cc in this folder becomes its own test executable.
#pragma once

#include "conformance_capabilities.h"
#include "conformance_lifecycle.h"
#include "conformance_misuse.h"
#include "conformance_submit.h"
#include "conformance_support.h"

// (gtest's INSTANTIATE macro splits its arguments at commas, so the fixture list becomes one alias first.)
#define QUIESCE_INSTANTIATE_CONFORMANCE_LEGAL_USE(prefix, ...)                                 \
  using prefix##LegalUseFixtures = ::testing::Types<__VA_ARGS__>;                              \
  INSTANTIATE_TYPED_TEST_SUITE_P(prefix, ConformanceLifecycle, prefix##LegalUseFixtures);      \
  INSTANTIATE_TYPED_TEST_SUITE_P(prefix, ConformanceSubmit, prefix##LegalUseFixtures);         \
  INSTANTIATE_TYPED_TEST_SUITE_P(prefix, ConformanceCapabilities, prefix##LegalUseFixtures)

#define QUIESCE_INSTANTIATE_CONFORMANCE_MISUSE(prefix, ...)            \
  using prefix##MisuseFixtures = ::testing::Types<__VA_ARGS__>;        \
  INSTANTIATE_TYPED_TEST_SUITE_P(prefix, ConformanceMisuse, prefix##MisuseFixtures)

#define QUIESCE_INSTANTIATE_CONFORMANCE(prefix, ...)             \
  QUIESCE_INSTANTIATE_CONFORMANCE_LEGAL_USE(prefix, __VA_ARGS__); \
  QUIESCE_INSTANTIATE_CONFORMANCE_MISUSE(prefix, __VA_ARGS__)
