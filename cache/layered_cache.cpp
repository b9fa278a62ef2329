// SPDX-License-Identifier: Apache-2.0
#include "cache/layered_cache.h"

#include "runtime/env.h"

namespace kjit::cache {

LayeredCache::LayeredCache(const std::string& cache_dir, const std::string& bundle_path,
                           std::uint64_t max_bytes, bool disk_enabled) {
  if (!bundle_path.empty()) bundle_ = std::make_unique<Bundle>(bundle_path);
  if (disk_enabled && !cache_dir.empty())
    disk_ = std::make_unique<DiskCache>(cache_dir, max_bytes);
}

std::unique_ptr<LayeredCache> LayeredCache::from_settings(const EnvSettings& settings) {
  return std::make_unique<LayeredCache>(settings.cache_dir, settings.cache_bundle,
                                        settings.cache_max_bytes, settings.disk_cache);
}

std::optional<Entry> LayeredCache::get(std::string_view kind, const std::string& key_text) {
  // The bundle answers first: it is what the deployment shipped, and it never goes stale
  // through local writes.
  if (bundle_) {
    if (std::optional<Entry> entry = bundle_->get(kind, key_text)) return entry;
  }
  if (disk_) return disk_->get(kind, key_text);
  return std::nullopt;
}

bool LayeredCache::put(std::string_view kind, const std::string& key_text,
                       std::string_view payload, const nlohmann::json& metadata) {
  return disk_ ? disk_->put(kind, key_text, payload, metadata) : false;
}

KeyLock LayeredCache::lock(std::string_view kind, const std::string& key_text) {
  return disk_ ? disk_->lock(kind, key_text) : KeyLock();
}

}  // namespace kjit::cache
