// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace kjit {

/// A map whose values are made once per key, however many threads ask at the same time: the
/// first asker makes the value outside the lock while the others wait on its future; askers of
/// other keys never wait behind it. A failed make is forgotten, so a later call tries again.
template <typename Key, typename Value, typename Hash = std::hash<Key>>
class OnceMap {
 public:
  using Pointer = std::shared_ptr<const Value>;

  /// The value for `key`, made by `make()` if nobody has made it yet.
  template <typename Make>
  Pointer get_or_make(const Key& key, Make&& make) {
    std::promise<Pointer> promise;
    std::shared_future<Pointer> future;
    bool maker = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = entries_.find(key);
      if (found != entries_.end()) {
        future = found->second;
      } else {
        future = promise.get_future().share();
        entries_.emplace(key, future);
        maker = true;
      }
    }
    if (!maker) return future.get();
    try {
      Pointer value = make();
      promise.set_value(value);
      return value;
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard<std::mutex> lock(mutex_);
      entries_.erase(key);
      throw;
    }
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::shared_future<Pointer>, Hash> entries_;
};

}  // namespace kjit
