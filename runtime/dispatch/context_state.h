// SPDX-License-Identifier: Apache-2.0
// What the dispatcher keeps per CUDA context: the device, its loaded modules, per-context launch
// resources, and one dispatch table per op family.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/driver/context.h"
#include "runtime/launch/loaded_kernel.h"
#include "runtime/once_map.h"

namespace kjit {

/// A family's kernel for one problem class, ready to launch, with the config it was built from.
template <typename Config>
struct ResolvedKernel {
  Launchable launchable;
  Config config;
};

struct FamilyTableBase {
  virtual ~FamilyTableBase() = default;
};

/// One family's dispatch table: problem class -> resolved kernel. Thread-safe.
template <typename Family>
class FamilyTable : public FamilyTableBase {
 public:
  using Entry = std::shared_ptr<const ResolvedKernel<typename Family::Config>>;

  Entry find(const typename Family::Key& key) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto found = entries_.find(key);
    return found == entries_.end() ? nullptr : found->second;
  }
  /// Keeps `entry` unless another thread got there first; returns the one kept.
  Entry insert(const typename Family::Key& key, Entry entry) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    return entries_.emplace(key, std::move(entry)).first->second;
  }
  void erase(const typename Family::Key& key) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    entries_.erase(key);
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<typename Family::Key, Entry, typename Family::KeyHash> entries_;
};

/// A small index per family, handed out on first use, so a context finds a family's table
/// without a lookup by name.
int next_family_slot();
template <typename Family>
int family_slot() {
  static const int slot = next_family_slot();
  return slot;
}

struct ContextState {
  static constexpr int kMaxFamilies = 16;

  CUcontext context = nullptr;
  DeviceProps device;
  OnceMap<std::string, LoadedKernel> modules;  // by kernel key text
  ContextResources resources;

  /// The family's table in this context, made on first use.
  template <typename Family>
  FamilyTable<Family>& table() {
    std::atomic<FamilyTableBase*>& slot = tables_[family_slot<Family>()];
    if (FamilyTableBase* table = slot.load(std::memory_order_acquire))
      return static_cast<FamilyTable<Family>&>(*table);
    std::lock_guard<std::mutex> lock(tables_mutex_);
    if (FamilyTableBase* table = slot.load(std::memory_order_acquire))
      return static_cast<FamilyTable<Family>&>(*table);
    owned_.push_back(std::make_unique<FamilyTable<Family>>());
    slot.store(owned_.back().get(), std::memory_order_release);
    return static_cast<FamilyTable<Family>&>(*owned_.back());
  }

 private:
  std::array<std::atomic<FamilyTableBase*>, kMaxFamilies> tables_{};
  std::mutex tables_mutex_;
  std::vector<std::unique_ptr<FamilyTableBase>> owned_;
};

}  // namespace kjit
