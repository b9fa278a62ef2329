// SPDX-License-Identifier: Apache-2.0
// The cache the runtime talks to: a read-only bundle first, then the writable disk cache.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cache/bundle.h"
#include "cache/disk_cache.h"
#include "cache/key_lock.h"
#include "runtime/env.h"


namespace kjit::cache {

/// An optional Bundle (KJIT_CACHE_BUNDLE, never written) in front of an optional DiskCache
/// (KJIT_CACHE_DIR). Either layer may be absent; with neither, every get is a miss and every put
/// a no-op, which leaves the runtime with its in-memory cache. Thread-safe.
class LayeredCache {
 public:
  /// Empty `bundle_path` means no bundle; `disk_enabled` false or empty `cache_dir` means no disk
  /// layer. `max_bytes` caps the disk layer (0: no cap). Never throws on I/O trouble.
  LayeredCache(const std::string& cache_dir, const std::string& bundle_path,
               std::uint64_t max_bytes, bool disk_enabled);

  /// Built from the environment settings (cache_dir, cache_bundle, cache_max_bytes, disk_cache).
  static std::unique_ptr<LayeredCache> from_settings(const EnvSettings& settings);

  /// The entry from the bundle if it has one, else from the disk cache, else nullopt.
  std::optional<Entry> get(std::string_view kind, const std::string& key_text);
  /// Stores into the disk layer; false when there is none or it did not store.
  bool put(std::string_view kind, const std::string& key_text, std::string_view payload,
           const nlohmann::json& metadata = nlohmann::json::object());
  /// The disk layer's per-key lock; an unheld no-op lock when there is no disk layer.
  KeyLock lock(std::string_view kind, const std::string& key_text);

  /// The bundle layer, or nullptr.
  const Bundle* bundle() const { return bundle_.get(); }
  /// The disk layer (for `kjit cache` commands), or nullptr.
  DiskCache* disk() { return disk_.get(); }

 private:
  std::unique_ptr<Bundle> bundle_;
  std::unique_ptr<DiskCache> disk_;
};

}  // namespace kjit::cache
