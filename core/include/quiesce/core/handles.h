// Move-only handles and their copyable references.
//
// Every backend of quiesce uses these same handle types, so decorators (Validator, Injector, Recorder) pass
// handles through without boxing or translation. A handle is a stable id plus the epoch of the context it
// belongs to; the backend keeps its native state in its own dense tables. Destroying calls consume the
// handle (`Buffer&&`); a rejected release hands the same live handle back. A moved-from handle has id 0.
#pragma once

#include <compare>
#include <cstdint>
#include <utility>

namespace quiesce {

struct ContextTag {};
struct BufferTag {};
struct ProgramTag {};
struct QueueTag {};
struct EventTag {};
struct ExecutableTag {};

// A non-owning, copyable name of a handle: what commands and traces carry.
template <class Tag>
struct Ref {
  std::uint64_t id = 0;
  std::uint32_t epoch = 0;

  bool valid() const { return id != 0; }
  friend bool operator==(const Ref&, const Ref&) = default;
  friend auto operator<=>(const Ref&, const Ref&) = default;
};

template <class Tag>
class Handle {
 public:
  Handle() = default;
  Handle(std::uint64_t id, std::uint32_t epoch) : ref_{id, epoch} {}

  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : ref_(std::exchange(other.ref_, Ref<Tag>{})) {}
  Handle& operator=(Handle&& other) noexcept {
    ref_ = std::exchange(other.ref_, Ref<Tag>{});
    return *this;
  }
  ~Handle() = default;

  std::uint64_t id() const { return ref_.id; }
  std::uint32_t epoch() const { return ref_.epoch; }
  bool valid() const { return ref_.id != 0; }
  Ref<Tag> ref() const { return ref_; }

 private:
  Ref<Tag> ref_{};
};

using Context = Handle<ContextTag>;
using Buffer = Handle<BufferTag>;
using Program = Handle<ProgramTag>;
using Queue = Handle<QueueTag>;
using Event = Handle<EventTag>;
using Executable = Handle<ExecutableTag>;

using ContextRef = Ref<ContextTag>;
using BufferRef = Ref<BufferTag>;
using ProgramRef = Ref<ProgramTag>;
using QueueRef = Ref<QueueTag>;
using EventRef = Ref<EventTag>;
using ExecutableRef = Ref<ExecutableTag>;

}  // namespace quiesce
