// A bounded multi-producer, multi-consumer channel and a pipeline over it, written against the Env concept
// only (core/env.h): the same code runs on quiesce::RealEnv with std::thread and on sim::FiberEnv with
// fibers on the virtual clock. Nothing here knows which one it has.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "quiesce/core/env.h"

namespace quiesce::testing {

template <Env E, class T>
class BoundedChannel {
 public:
  explicit BoundedChannel(std::size_t capacity) : capacity_(capacity) { assert(capacity > 0); }

  // Blocks while the channel is full. False, dropping the value, once the channel is closed.
  bool send(T value) {
    std::unique_lock<typename E::Mutex> lock(mutex_);
    while (items_.size() == capacity_ && !closed_) not_full_.wait(lock);
    if (closed_) return false;
    assert(items_.size() < capacity_);
    items_.push_back(std::move(value));
    depth_max_ = std::max(depth_max_, items_.size());
    not_empty_.notify_one();
    return true;
  }

  // Blocks while the channel is empty and open. Empty once it is closed and drained.
  std::optional<T> receive() {
    std::unique_lock<typename E::Mutex> lock(mutex_);
    while (items_.empty() && !closed_) not_empty_.wait(lock);
    if (items_.empty()) return std::nullopt;
    T value = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return value;
  }

  void close() {
    std::unique_lock<typename E::Mutex> lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  std::size_t depth_max() {
    std::unique_lock<typename E::Mutex> lock(mutex_);
    return depth_max_;
  }

 private:
  std::size_t capacity_;
  typename E::Mutex mutex_;
  typename E::CondVar not_full_;
  typename E::CondVar not_empty_;
  std::deque<T> items_;  // bounded by capacity_
  std::size_t depth_max_ = 0;
  bool closed_ = false;
};

struct PipelineShape {
  int producers = 3;
  int consumers = 2;
  int items_per_producer = 40;
  std::size_t capacity = 4;
  std::uint64_t pace_ns = 1000;  // each producer sleeps this long after every 8 items
};

struct PipelineTotals {
  std::uint64_t sent_count = 0;
  std::uint64_t sent_sum = 0;
  std::uint64_t received_count = 0;
  std::uint64_t received_sum = 0;
  std::size_t depth_max = 0;
};

// Producers send distinct values, consumers drain them, the channel closes after every producer is joined.
// Every value sent is received exactly once: counts and sums match.
template <Env E>
PipelineTotals run_pipeline(E& env, const PipelineShape& shape) {
  BoundedChannel<E, std::uint64_t> channel(shape.capacity);
  typename E::Mutex totals_mutex;
  PipelineTotals totals;
  std::vector<typename E::Thread> producers;
  std::vector<typename E::Thread> consumers;
  for (int producer = 0; producer < shape.producers; ++producer) {
    producers.push_back(env.spawn([&env, &channel, &totals, &totals_mutex, &shape, producer] {
      for (int item = 0; item < shape.items_per_producer; ++item) {
        const std::uint64_t value = static_cast<std::uint64_t>(producer) * 1'000'000 + static_cast<std::uint64_t>(item);
        if (!channel.send(value)) return;
        {
          std::unique_lock<typename E::Mutex> lock(totals_mutex);
          ++totals.sent_count;
          totals.sent_sum += value;
        }
        if (item % 8 == 7) env.sleep_until(env.now_ns() + shape.pace_ns);
      }
    }));
  }
  for (int consumer = 0; consumer < shape.consumers; ++consumer) {
    consumers.push_back(env.spawn([&channel, &totals, &totals_mutex] {
      while (const std::optional<std::uint64_t> value = channel.receive()) {
        std::unique_lock<typename E::Mutex> lock(totals_mutex);
        ++totals.received_count;
        totals.received_sum += *value;
      }
    }));
  }
  for (typename E::Thread& producer : producers) env.join(producer);
  channel.close();
  for (typename E::Thread& consumer : consumers) env.join(consumer);
  totals.depth_max = channel.depth_max();
  return totals;
}

}  // namespace quiesce::testing
