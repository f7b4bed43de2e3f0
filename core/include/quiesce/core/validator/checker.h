// ContractChecker: the backend-independent state machine behind Validator<B>.
//
// Validator<B> is a thin template that forwards each call; everything it knows lives here, compiled once
// in core/src/validator_*.cc. For every call the validator asks `before_*` (the caller rules: may this call
// be made now?) and, when the call was forwarded, tells `after_*` what the backend answered (the provider
// rules, and the shadow update). `before_*` returns false when the call must not be forwarded (StopAtFirst
// and a caller rule was broken); refusal() is then the error to answer with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "quiesce/core/command.h"
#include "quiesce/core/handles.h"
#include "quiesce/core/outcome.h"
#include "quiesce/core/result.h"
#include "quiesce/core/types.h"
#include "quiesce/core/validator/shadow.h"
#include "quiesce/core/validator/violation.h"

namespace quiesce {

// A released handle's outcome, in the shape every ReleaseResult<H> shares.
struct ReleaseAnswer {
  ReleaseStatus status = ReleaseStatus::Released;
  std::uint64_t returned_id = 0;
  std::uint32_t returned_epoch = 0;
  Error error = {};

  template <class H>
  static ReleaseAnswer of(const ReleaseResult<H>& result) {
    return ReleaseAnswer{result.status, result.handle.id(), result.handle.epoch(), result.error};
  }
};

// Native codes of the errors the validator answers with itself (domain Core): kRefusalCodeBase + rule.
inline constexpr std::int32_t kRefusalCodeBase = 1000;

class ContractChecker {
 public:
  explicit ContractChecker(ValidatorOptions options);

  // ---- calls with nothing to check before ----
  void note_call(Call call);

  // ---- contexts ----
  void after_create_context(const Result<Context>& result);
  bool before_destroy_context(ContextRef context);
  void after_destroy_context(ContextRef context, const ReleaseAnswer& answer);
  bool before_discard_context(ContextRef context);
  void after_discard_context(ContextRef context, const Status& status);
  bool before_context_call(Call call, ContextRef context);  // memory_usage, memory_report, pools, cleanup
  void after_context_call(ContextRef context, const Error* error);

  // ---- buffers ----
  bool before_allocate_buffer(ContextRef context, const BufferDesc& desc);
  void after_allocate_buffer(ContextRef context, const BufferDesc& desc, const Result<Buffer>& result);
  bool before_buffer_info(BufferRef buffer);
  bool before_write_buffer(BufferRef buffer, std::uint64_t offset, std::uint64_t bytes);
  bool before_read_buffer(BufferRef buffer, std::uint64_t offset, std::uint64_t bytes);
  // After a successful read: report a run of still-poisoned sink bytes (see poison_sink).
  void after_read_buffer(BufferRef buffer, const Status& status, ByteSink sink);
  void after_buffer_call(BufferRef buffer, const Error* error);
  bool before_free_buffer(BufferRef buffer);
  void after_free_buffer(BufferRef buffer, const ReleaseAnswer& answer);

  // ---- programs ----
  bool before_load_program(ContextRef context);
  void after_load_program(ContextRef context, const Result<Program>& result);
  bool before_unload_program(ProgramRef program);
  void after_unload_program(ProgramRef program, const ReleaseAnswer& answer);

  // ---- queues and submission ----
  bool before_create_queue(ContextRef context);
  void after_create_queue(ContextRef context, const Result<Queue>& result);
  bool before_destroy_queue(QueueRef queue);
  void after_destroy_queue(QueueRef queue, const ReleaseAnswer& answer);
  bool before_queue_state(QueueRef queue);
  void after_queue_state(QueueRef queue, const QueueState& state);
  bool before_submit(QueueRef queue, Batch batch, const SubmitOptions& options);
  void after_submit(QueueRef queue, Batch batch, const SubmitOptions& options, const SubmitResult& result);
  bool before_synchronize(QueueRef queue);
  void after_synchronize(QueueRef queue, const Status& status);

  // ---- events ----
  bool before_poll_event(EventRef event);
  void after_poll_event(EventRef event, const Observation& observation);
  bool before_wait_event(EventRef event);
  void after_wait_event(EventRef event, const WaitResult& result);
  bool before_cancel_event(EventRef event);
  void after_cancel_event(EventRef event, const Status& status);
  bool before_destroy_event(EventRef event);
  void after_destroy_event(EventRef event, const ReleaseAnswer& answer);

  // ---- capture windows and executables ----
  bool before_begin_capture(QueueRef queue);
  void after_begin_capture(QueueRef queue, const Status& status);
  bool before_capture(QueueRef queue, Batch batch);
  void after_capture(QueueRef queue, Batch batch, const Status& status);
  bool before_end_capture(QueueRef queue);
  void after_end_capture(QueueRef queue, const Result<Executable>& result);
  bool before_destroy_executable(ExecutableRef executable);
  void after_destroy_executable(ExecutableRef executable, const ReleaseAnswer& answer);

  // ---- end of run ----
  // Records every live handle (a leak) and every open capture window, at the position after the last call,
  // and returns violation_count(). Idempotent: a second call adds nothing.
  std::uint64_t finish();
  // What finish() would record now, without recording it (for reports taken mid-run).
  std::vector<Violation> end_of_run() const;

  // The error a refused call answers with: domain Core, native code kRefusalCodeBase + rule, the rule's
  // name as text. PermissionDenied for access modes, InvalidArgument otherwise.
  Error refusal() const;

  const std::vector<Violation>& violations() const { return violations_; }
  std::uint64_t violation_count() const { return violation_count_; }
  std::uint64_t calls() const { return calls_; }
  const ValidatorOptions& options() const { return options_; }
  // The poison salt of the current call (the read check fills the sink with it before forwarding).
  std::uint64_t poison_salt() const;
  // Before forwarding a read: fills the sink with the current call's poison and keeps the first poison
  // words, so that the check after the read compares with them instead of hashing every position again.
  void poison_read_sink(ByteSink sink);

 private:
  enum class Use : std::uint8_t { Operate, Release };

  void start(Call call);
  bool forward() const;
  void report(Rule rule, HandleName subject, HandleName related = {}, std::string_view observed = {},
              std::uint64_t value = 0);
  void record(const Violation& violation);
  void note_error(std::uint64_t context, const Error& error);

  ContextShadow* use_context(ContextRef ref, Use use);
  BufferShadow* use_buffer(BufferRef ref, Use use);
  ProgramShadow* use_program(ProgramRef ref, Use use);
  QueueShadow* use_queue(QueueRef ref, Use use);
  EventShadow* use_event(EventRef ref, Use use);
  ExecutableShadow* use_executable(ExecutableRef ref, Use use);
  // The shared part of use_*: life, epoch, the owning context's state. Null when unusable.
  template <class Record>
  Record* use_child(ShadowTable<Record>& table, HandleKind kind, std::uint64_t id, std::uint32_t epoch, Use use);
  bool check_created(HandleKind kind, std::uint64_t id, std::uint32_t epoch, std::uint64_t context);

  // Commands: the caller rules of one batch (handles live, same context, access modes, ranges).
  void check_batch(const QueueShadow& queue, QueueRef queue_ref, Batch batch);
  void check_command(const Command& command, std::uint64_t context, QueueRef queue_ref);
  void check_binding_target(BufferRef ref, BufferUsage needed, std::uint64_t offset, std::uint64_t bytes,
                            std::uint64_t context, QueueRef queue_ref);
  void check_resubmission(QueueShadow& queue, QueueRef queue_ref, Batch batch, const SubmitOptions& options);
  void pin_batch(Batch batch, std::vector<PinRef>& pins, std::uint64_t event_queue);
  void pin(PinRef ref, std::vector<PinRef>& pins, std::uint64_t event_queue);
  void unpin_list(std::uint32_t list, bool as_event);
  void register_event(QueueRef queue_ref, Batch batch, const SubmitOptions& options, const Event& event,
                      SubmitStatus status);

  // Events: the provider rules of one observed state.
  void check_observed(EventRef ref, EventShadow& event, EventState state, bool has_timing);
  HandleName find_pinning_event(HandleKind kind, std::uint64_t id);
  HandleName find_pinning_executable(HandleKind kind, std::uint64_t id);
  HandleName find_child(std::uint64_t context);
  void check_release_answer(HandleName released, const ReleaseAnswer& answer);
  void check_read_initialised(BufferRef buffer, ByteSink sink);

  ValidatorOptions options_;
  ShadowTable<ContextShadow> contexts_;
  ShadowTable<BufferShadow> buffers_;
  ShadowTable<ProgramShadow> programs_;
  ShadowTable<QueueShadow> queues_;
  ShadowTable<EventShadow> events_;
  ShadowTable<ExecutableShadow> executables_;
  PinLists pin_lists_;
  std::vector<std::uint64_t> indeterminate_invocations_;  // sorted
  std::vector<std::uint64_t> poison_words_;  // a read's first poison words (poison_read_sink)
  std::uint64_t poison_words_call_ = UINT64_MAX;  // the call_index_ they belong to
  std::vector<Violation> violations_;
  std::uint64_t violation_count_ = 0;
  std::uint64_t calls_ = 0;
  std::uint64_t call_index_ = 0;
  Call call_ = Call::None;
  Rule first_caller_rule_ = Rule::ValidatorBoundExceeded;
  std::uint32_t caller_violations_in_call_ = 0;
  bool finished_ = false;
};

// Fills every sink byte with a pattern derived from `salt` and its position, and finds the first run of at
// least kPoisonRunMin consecutive bytes that still hold it (UINT64_MAX when none). See docs/validator.md.
inline constexpr std::uint64_t kPoisonRunMin = 8;
void poison_sink(ByteSink sink, std::uint64_t salt);
std::uint64_t find_poison_run(ByteSink sink, std::uint64_t salt);
// The same poison and scan, with the first `words.size()` poison words of `salt` at hand: poison_sink keeps
// up to kPoisonWordsKeptMax of them in `words`, find_poison_run reads them there and hashes only the rest.
inline constexpr std::size_t kPoisonWordsKeptMax = std::size_t{1} << 17;  // 1 MiB of sink
void poison_sink(ByteSink sink, std::uint64_t salt, std::vector<std::uint64_t>& words);
std::uint64_t find_poison_run(ByteSink sink, std::uint64_t salt, std::span<const std::uint64_t> words);

// A 64-bit digest of a batch's content (kinds, handles, offsets, sizes, parameter and upload bytes).
std::uint64_t batch_digest(Batch batch);

}  // namespace quiesce
