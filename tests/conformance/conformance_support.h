// The harness of the conformance suite: what a fixture provides, and the contract-aware helpers the tests
// are written with.
//
// A fixture names one backend under test:
//
//   struct SimFixture {
//     using Backend = quiesce::sim::Device;
//     static constexpr bool kMayInjectFaults = false;     // true for faults::Injector<...> stacks
//     static constexpr bool kHoldsWorkUntilDriven = true;  // work waits for settle(): a virtual clock
//     static std::unique_ptr<Backend> make();
//     static void settle(Backend& backend);                // virtual clock: run until idle; real: wait a bit
//     // optional:
//     static std::string findings(const Backend& backend); // oracle findings / violations; "" when none
//     static constexpr std::uint64_t kLongWorkNs = ...;    // a delay that stays pending (default 1 s)
//     static constexpr std::uint64_t kWaitTimeoutNs = ...; // a wait that must reach a terminal (default 60 s)
//   };
//
// Every helper accepts exactly the outcomes the contract allows. With kMayInjectFaults false only the plain
// successful outcome is accepted: any error fails the test. With kMayInjectFaults true an error is
// tolerated where the contract permits one, and the guarantee of that branch is asserted instead: a
// rejected release hands back the same live handle and is retried a bounded number of times; an
// indeterminate release is never retried; a rejected submit ran nothing (the caller's check runs) and is
// retried exactly, with the same invocation id; an indeterminate submit is waited on like a submitted one;
// an indeterminate poll or wait is repeated while the event stays live. Device loss under injected faults
// ends a test early (nothing on that context can succeed again); the faults tests check loss itself.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quiesce/core.h"

namespace quiesce::conformance {

template <class F>
concept ConformanceFixture =
    Backend<typename F::Backend> && requires(typename F::Backend& backend) {
      { F::make() } -> std::same_as<std::unique_ptr<typename F::Backend>>;
      F::settle(backend);
      { F::kMayInjectFaults } -> std::convertible_to<bool>;
      { F::kHoldsWorkUntilDriven } -> std::convertible_to<bool>;
    };

template <class F>
constexpr std::uint64_t long_work_ns() {
  if constexpr (requires { F::kLongWorkNs; }) {
    return F::kLongWorkNs;
  } else {
    return 1'000'000'000;  // one second: pending for as long as any test looks
  }
}

template <class F>
constexpr std::uint64_t wait_timeout_ns() {
  if constexpr (requires { F::kWaitTimeoutNs; }) {
    return F::kWaitTimeoutNs;
  } else {
    return 60'000'000'000;  // one minute: far beyond any work the suite submits
  }
}

template <class F>
std::string findings_of(const typename F::Backend& backend) {
  if constexpr (requires { F::findings(backend); }) {
    return F::findings(backend);
  } else {
    return {};
  }
}

// Thrown by a helper after it has reported a failure, to end the test body.
struct HarnessAbort {};
// Thrown when a fault-injecting stack lost the device: nothing on that context can be checked further.
struct WorldLost {
  std::string during;
};

// ---- bytes ----

inline std::array<std::byte, 4> u32_le(std::uint32_t value) {
  std::array<std::byte, 4> bytes{};
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    bytes[index] = static_cast<std::byte>((value >> (8U * index)) & 0xFFU);
  }
  return bytes;
}

inline std::array<std::byte, 8> u64_le(std::uint64_t value) {
  std::array<std::byte, 8> bytes{};
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    bytes[index] = static_cast<std::byte>((value >> (8U * index)) & 0xFFU);
  }
  return bytes;
}

inline std::uint32_t word_at(std::span<const std::byte> bytes, std::size_t word) {
  std::uint32_t value = 0;
  for (std::size_t index = 0; index < 4; ++index) {
    value |= std::to_integer<std::uint32_t>(bytes[word * 4 + index]) << (8U * index);
  }
  return value;
}

// Deterministic, position-dependent content: a misplaced or missing byte shows.
inline std::vector<std::byte> pattern(std::uint64_t bytes, std::uint8_t seed) {
  std::vector<std::byte> content(bytes);
  for (std::uint64_t index = 0; index < bytes; ++index) {
    content[index] = static_cast<std::byte>((index * 13U + seed * 7U + 1U) & 0xFFU);
  }
  return content;
}

inline std::vector<std::byte> repeated_word(std::uint64_t bytes, std::uint32_t word) {
  std::vector<std::byte> content(bytes);
  const std::array<std::byte, 4> little = u32_le(word);
  for (std::uint64_t index = 0; index < bytes; ++index) content[index] = little[index % 4];
  return content;
}

// Enough threads for one per u32 word, in blocks of at most 256 (what the CUDA kernels need; the
// simulator only validates the shape).
inline LaunchDims dims_for_bytes(std::uint64_t bytes) {
  const std::uint64_t words = bytes / 4 == 0 ? 1 : bytes / 4;
  const std::uint32_t block = words < 256 ? static_cast<std::uint32_t>(words) : 256U;
  LaunchDims dims;
  dims.block_x = block;
  dims.grid_x = static_cast<std::uint32_t>((words + block - 1) / block);
  return dims;
}

// An error that a missing capability must produce: Unsupported (unless a fault was injected).
inline void expect_unsupported(const Error& error) {
  if (!error.injected) {
    EXPECT_EQ(error.kind, ErrorKind::Unsupported) << "a missing capability must answer Unsupported";
  }
}

// ---- one context and its children ----

struct World {
  Context context;
  std::vector<Queue> queues;
  std::vector<Program> programs;
  std::vector<Buffer> buffers;

  const Queue& queue(std::size_t index = 0) const { return queues.at(index); }
  Buffer& buffer(BufferRef ref) {
    for (Buffer& candidate : buffers) {
      if (candidate.ref() == ref) return candidate;
    }
    ADD_FAILURE() << "buffer " << ref.id << " is not part of this world";
    throw HarnessAbort{};
  }
};

template <class F>
class Harness {
 public:
  using B = typename F::Backend;
  static constexpr bool kFaults = F::kMayInjectFaults;
  static constexpr std::uint32_t kAttemptsMax = 16;  // retries of one rejected or transient step
  static constexpr std::uint32_t kCleanRunsMax = 32;  // fresh invocations until one runs without a fault

  explicit Harness(B& backend) : backend_(&backend) {}

  B& backend() { return *backend_; }

  [[noreturn]] void fail(const std::string& message) {
    ADD_FAILURE() << message;
    throw HarnessAbort{};
  }

  // An error where the contract allows one: fatal without fault injection; under injection, device loss
  // ends the test and any other error lets the caller retry what the contract says may be retried.
  void tolerate(const Error& error, std::string_view during) {
    if (!kFaults) fail(std::string(during) + " failed: " + backend_->describe_error(error));
    if (error.kind == ErrorKind::DeviceLost) throw WorldLost{std::string(during)};
  }

  const DeviceInfo& info() {
    for (std::uint32_t attempt = 0; !info_ && attempt < kAttemptsMax; ++attempt) {
      Result<DeviceInfo> info = backend_->device_info();
      if (info.ok()) {
        info_ = info.value();
      } else {
        tolerate(info.error(), "device_info");
      }
    }
    if (!info_) fail("device_info failed " + std::to_string(kAttemptsMax) + " times in a row");
    return *info_;
  }
  bool has(Capability capability) { return has_capability(info().capabilities, capability); }

  std::uint64_t next_invocation() { return ++invocations_; }

  // ---- creation: an error retains nothing and may be retried ----

  template <class Create>
  auto create(Create&& call, std::string_view what) -> typename decltype(call())::value_type {
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      auto created = call();
      if (created.ok()) {
        EXPECT_TRUE(created->valid()) << what << " succeeded with an empty handle";
        return std::move(created).value();
      }
      tolerate(created.error(), what);
    }
    fail(std::string(what) + " failed " + std::to_string(kAttemptsMax) + " times in a row");
  }

  Context create_context() {
    return create([&] { return backend_->create_context(ContextDesc{}); }, "create_context");
  }
  Queue create_queue(const Context& context) {
    return create([&] { return backend_->create_queue(context, QueueDesc{}); }, "create_queue");
  }
  Program load(const Context& context, std::string_view kernel_name) {
    ArtifactRef artifact;
    artifact.kernel_name = kernel_name;
    artifact.format = ArtifactFormat::Builtin;
    artifact.resident_bytes = 1U << 20;
    return create([&] { return backend_->load_program(context, artifact); }, "load_program");
  }
  // Allocation only under a permit, issued by a transaction that commits one buffer.
  Buffer allocate(const Context& context, const BufferDesc& desc) {
    return create(
        [&]() -> Result<Buffer> {
          ResourceTransaction<B> transaction(*backend_, context, budget_, ++transactions_);
          Result<BufferRef> staged = transaction.allocate(desc);
          if (!staged.ok()) return staged.error();
          std::vector<Buffer> committed = transaction.commit();
          EXPECT_EQ(committed.size(), 1U);
          EXPECT_EQ(committed.at(0).ref(), staged.value());
          return std::move(committed.at(0));
        },
        "allocate_buffer");
  }

  // ---- releases: Rejected hands back the same live handle; Indeterminate is never retried ----

  template <class H, class Release>
  ReleaseStatus release(H&& handle, Release&& call, std::string_view what) {
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      const auto ref = handle.ref();
      if (!ref.valid()) fail(std::string(what) + " was asked to release an empty handle");
      ReleaseResult<std::remove_cvref_t<H>> released = call(std::move(handle));
      if (released.status == ReleaseStatus::Released) {
        EXPECT_FALSE(handle.valid()) << what << " released handle " << ref.id << " but did not consume it";
        EXPECT_FALSE(released.handle.valid()) << what << " released handle " << ref.id << " and handed it back";
        return ReleaseStatus::Released;
      }
      if (released.status == ReleaseStatus::Indeterminate) {
        EXPECT_FALSE(released.handle.valid()) << "an indeterminate " << what << " must invalidate the handle";
        tolerate(released.error, what);
        ++indeterminate_releases_;
        return ReleaseStatus::Indeterminate;
      }
      EXPECT_EQ(released.handle.ref(), ref) << "a rejected " << what << " must hand back the same live handle";
      tolerate(released.error, what);
      handle = std::move(released.handle);
    }
    fail(std::string(what) + " was rejected " + std::to_string(kAttemptsMax) + " times in a row");
  }

  ReleaseStatus free(Buffer&& buffer) {
    return release(std::move(buffer), [&](Buffer&& owned) { return backend_->free_buffer(std::move(owned)); },
                   "free_buffer");
  }
  ReleaseStatus unload(Program&& program) {
    return release(std::move(program),
                   [&](Program&& owned) { return backend_->unload_program(std::move(owned)); }, "unload_program");
  }
  ReleaseStatus destroy(Queue&& queue) {
    return release(std::move(queue), [&](Queue&& owned) { return backend_->destroy_queue(std::move(owned)); },
                   "destroy_queue");
  }
  ReleaseStatus destroy(Event&& event) {
    return release(std::move(event), [&](Event&& owned) { return backend_->destroy_event(std::move(owned)); },
                   "destroy_event");
  }
  ReleaseStatus destroy(Executable&& executable) {
    return release(std::move(executable),
                   [&](Executable&& owned) { return backend_->destroy_executable(std::move(owned)); },
                   "destroy_executable");
  }
  ReleaseStatus destroy(Context&& context) {
    return release(std::move(context),
                   [&](Context&& owned) { return backend_->destroy_context(std::move(owned)); }, "destroy_context");
  }

  // ---- worlds ----

  World open_world(std::size_t queues = 1) {
    World world;
    world.context = create_context();
    for (std::size_t index = 0; index < queues; ++index) world.queues.push_back(create_queue(world.context));
    return world;
  }
  BufferRef add_buffer(World& world, std::uint64_t bytes, BufferUsage usage = kAllBufferUsage) {
    BufferDesc desc;
    desc.bytes = bytes;
    desc.usage = usage;
    world.buffers.push_back(allocate(world.context, desc));
    return world.buffers.back().ref();
  }
  ProgramRef add_program(World& world, std::string_view kernel_name) {
    world.programs.push_back(load(world.context, kernel_name));
    return world.programs.back().ref();
  }

  // Releases every child, then the context. Under injected faults a context whose children could not all
  // be proven released is discarded instead: the whole-context discard is the recovery the contract gives.
  void close_world(World& world) {
    bool all_released = true;
    for (Buffer& buffer : world.buffers) all_released &= free(std::move(buffer)) == ReleaseStatus::Released;
    for (Program& program : world.programs) all_released &= unload(std::move(program)) == ReleaseStatus::Released;
    for (Queue& queue : world.queues) all_released &= destroy(std::move(queue)) == ReleaseStatus::Released;
    world.buffers.clear();
    world.programs.clear();
    world.queues.clear();
    if (!all_released) {
      const Status discarded = backend_->discard_context(std::move(world.context));
      EXPECT_TRUE(discarded.ok()) << "discard_context failed: " << backend_->describe_error(discarded.error());
      return;
    }
    const ReleaseStatus status = destroy(std::move(world.context));
    if (!kFaults) {
      EXPECT_EQ(status, ReleaseStatus::Released);
    }
  }

  // ---- explicit transfers ----

  // Writes `bytes` at `offset` as three segments; a failed write may have changed part of the range, and a
  // later full-range write replaces it.
  void write(Buffer& buffer, std::uint64_t offset, std::span<const std::byte> bytes) {
    const std::size_t third = bytes.size() / 3;
    const std::array<std::span<const std::byte>, 3> segments = {
        bytes.subspan(0, third), bytes.subspan(third, third), bytes.subspan(2 * third)};
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      const Status written = backend_->write_buffer(buffer, offset, ByteSource{segments});
      if (written.ok()) return;
      tolerate(written.error(), "write_buffer");
    }
    fail("write_buffer failed " + std::to_string(kAttemptsMax) + " times in a row");
  }

  // Reads into a two-segment sink twice, pre-filled with two different poison bytes: a successful read
  // initialises every byte, so both reads must agree (a byte the backend skipped shows its poison).
  std::vector<std::byte> read(const Buffer& buffer, std::uint64_t offset, std::uint64_t bytes) {
    std::vector<std::byte> first = read_poisoned(buffer, offset, bytes, std::byte{0xA5});
    const std::vector<std::byte> second = read_poisoned(buffer, offset, bytes, std::byte{0x5A});
    EXPECT_EQ(first, second) << "read_buffer succeeded but left sink bytes uninitialised";
    return first;
  }

  std::vector<std::byte> read_poisoned(const Buffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                                       std::byte poison) {
    std::vector<std::byte> sink(bytes, poison);
    const std::size_t half = sink.size() / 2;
    const std::array<std::span<std::byte>, 2> segments = {std::span<std::byte>(sink).subspan(0, half),
                                                          std::span<std::byte>(sink).subspan(half)};
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      const Status read = backend_->read_buffer(buffer, offset, ByteSink{segments});
      if (read.ok()) return sink;
      tolerate(read.error(), "read_buffer");
    }
    fail("read_buffer failed " + std::to_string(kAttemptsMax) + " times in a row");
  }

  // ---- submission and events ----

  // One submit call, with the shape of its outcome checked.
  SubmitResult submit_once(const Queue& queue, Batch batch, const SubmitOptions& options) {
    SubmitResult result = backend_->submit(queue, batch, options);
    switch (result.status) {
      case SubmitStatus::Submitted:
        EXPECT_TRUE(result.event.valid()) << "a submitted batch must come with its event";
        EXPECT_EQ(result.commands_enqueued, batch.size()) << "a submitted batch enqueues every command";
        break;
      case SubmitStatus::Rejected:
        EXPECT_FALSE(result.event.valid()) << "a rejected batch has no event";
        EXPECT_EQ(result.commands_enqueued, 0U) << "a rejected batch enqueued nothing";
        break;
      case SubmitStatus::Indeterminate:
        EXPECT_TRUE(result.event.valid()) << "an indeterminate submit must retain an event";
        EXPECT_LE(result.commands_enqueued, batch.size());
        break;
    }
    return result;
  }

  // True when the submit was rejected. Without injection anything else fails the test; under injection
  // an outcome that is not a rejection is possible work, so its event is waited on and destroyed (never
  // retried as if rejected, R4) and false is returned.
  bool rejected_or_finished(SubmitResult& result, std::string_view what) {
    if (result.status == SubmitStatus::Rejected) return true;
    if (!kFaults) {
      ADD_FAILURE() << what << " was " << to_string(result.status) << ", not rejected";
    }
    (void)finish(std::move(result.event));
    return false;
  }

  struct Ran {
    SubmitStatus status = SubmitStatus::Submitted;
    std::uint32_t rejections = 0;
    Receipt receipt;
    bool clean() const { return status == SubmitStatus::Submitted && receipt.state == EventState::Complete; }
  };

  // Submits, retrying a rejection exactly (same batch, same invocation) after `after_rejected` has checked
  // that nothing ran; then waits for the terminal, checks that it is stable and destroys the event.
  Ran run(const Queue& queue, Batch batch, SubmitOptions options = {},
          const std::function<void()>& after_rejected = {}) {
    if (options.invocation == 0) options.invocation = next_invocation();
    Ran ran;
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      SubmitResult result = submit_once(queue, batch, options);
      if (result.status == SubmitStatus::Rejected) {
        ++ran.rejections;
        tolerate(result.error, "submit");
        if (after_rejected) after_rejected();
        continue;
      }
      ran.status = result.status;
      if (result.status == SubmitStatus::Indeterminate) tolerate(result.error, "submit");
      ran.receipt = finish(std::move(result.event));
      if (!kFaults) {
        EXPECT_EQ(ran.receipt.state, EventState::Complete)
            << "the batch ended " << to_string(ran.receipt.state) << ": " << backend_->describe_error(ran.receipt.error);
      }
      return ran;
    }
    fail("submit was rejected " + std::to_string(kAttemptsMax) + " times in a row");
  }

  // Runs fresh invocations of `batch` (after `prepare` resets its inputs) until one runs clean: only a
  // clean run's bytes are defined. Without injected faults the first run must be clean.
  Ran run_clean(const Queue& queue, Batch batch, const std::function<void()>& prepare,
                SubmitOptions options = {}, const std::function<void()>& after_rejected = {}) {
    for (std::uint32_t attempt = 0; attempt < kCleanRunsMax; ++attempt) {
      if (prepare) prepare();
      options.invocation = next_invocation();
      Ran ran = run(queue, batch, options, after_rejected);
      if (ran.clean()) return ran;
      if (!kFaults) fail("a batch did not run clean without any fault injected");
    }
    fail("no clean run of a batch in " + std::to_string(kCleanRunsMax) + " fresh invocations");
  }

  Receipt wait_terminal(const Event& event) {
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      WaitResult waited = backend_->wait_event(event, wait_timeout_ns<F>());
      if (waited.ok()) {
        EXPECT_TRUE(is_terminal(waited->state)) << "wait_event returned the non-terminal state "
                                                << to_string(waited->state);
        return waited.value();
      }
      tolerate(waited.error().error, "wait_event");  // FenceIndeterminate: the event is still live
    }
    fail("wait_event was indeterminate " + std::to_string(kAttemptsMax) + " times in a row");
  }

  // A poll that is not Indeterminate (an indeterminate poll is repeated, bounded, under injection).
  Observation poll(const Event& event) {
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      Observation observed = backend_->poll_event(event);
      if (observed.state != EventState::Indeterminate) return observed;
      tolerate(observed.error, "poll_event");
    }
    fail("poll_event was indeterminate " + std::to_string(kAttemptsMax) + " times in a row");
  }

  // Once observed, a terminal state never changes.
  void expect_stable(const Event& event, EventState terminal) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      const Observation observed = poll(event);
      EXPECT_EQ(observed.state, terminal) << "a terminal state changed from " << to_string(terminal) << " to "
                                          << to_string(observed.state);
    }
  }

  Receipt finish(Event&& event) {
    const Receipt receipt = wait_terminal(event);
    expect_stable(event, receipt.state);
    (void)destroy(std::move(event));
    return receipt;
  }

  std::uint32_t indeterminate_releases() const { return indeterminate_releases_; }

 private:
  B* backend_;
  MemoryBudget budget_{std::uint64_t{1} << 62};  // only a permit source: the device's own OOM is under test
  std::uint64_t transactions_ = 0;
  std::uint64_t invocations_ = 0;
  std::uint32_t indeterminate_releases_ = 0;
  std::optional<DeviceInfo> info_;
};

// The base of every conformance test: one fresh backend per test, the harness over it, and a check of the
// fixture's findings (oracle findings, validator violations) after each test.
template <class F>
class ConformanceBase : public ::testing::Test {
  static_assert(ConformanceFixture<F>, "a conformance fixture needs Backend, make(), settle() and the two facts");

 protected:
  void SetUp() override {
    backend_ = F::make();
    ASSERT_NE(backend_, nullptr) << "the fixture made no backend";
    harness_.emplace(*backend_);
  }
  void TearDown() override {
    if (!backend_) return;
    F::settle(*backend_);
    const std::string findings = findings_of<F>(*backend_);
    EXPECT_TRUE(findings.empty()) << "the backend under test reported findings:\n" << findings;
  }

  // Runs a test body; a helper that already failed ends it, and so does device loss under injection.
  template <class Body>
  void guarded(Body&& body) {
    try {
      body(*harness_);
    } catch (const HarnessAbort&) {
      // the failure is already recorded
    } catch (const WorldLost& lost) {
      ASSERT_TRUE(F::kMayInjectFaults) << "the device was lost without fault injection";
      std::printf("note: the device was lost during %s; the rest of this test cannot run\n", lost.during.c_str());
    }
  }

  std::unique_ptr<typename F::Backend> backend_;
  std::optional<Harness<F>> harness_;
};

}  // namespace quiesce::conformance
