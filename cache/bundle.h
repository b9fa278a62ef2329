// SPDX-License-Identifier: Apache-2.0
// A read-only bundle of cache entries (KJIT_CACHE_BUNDLE), the first layer looked at.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/bundle_format.h"
#include "cache/entry_format.h"

namespace kjit::cache {

/// A bundle file written by DiskCache::export_bundle, opened read-only. The whole file is
/// validated on open; a bad one logs one warning and then behaves as an empty bundle, because a
/// deployment must still run (and compile) when its bundle is damaged. Thread-safe for reads.
class Bundle {
 public:
  /// An empty bundle.
  Bundle() = default;
  /// Opens and validates `path`; never throws.
  explicit Bundle(const std::string& path);
  ~Bundle();
  Bundle(Bundle&& other) noexcept;
  Bundle& operator=(Bundle&& other) noexcept;
  Bundle(const Bundle&) = delete;
  Bundle& operator=(const Bundle&) = delete;

  /// True when the file opened and every entry in it checked out.
  bool valid() const { return fd_ >= 0; }
  /// Why the bundle is not valid; empty when it is.
  const std::string& problem() const { return problem_; }
  /// The file this bundle was opened from.
  const std::string& path() const { return path_; }
  /// Number of entries (0 when not valid).
  std::size_t size() const { return items_.size(); }

  /// The entry for this key, or nullopt.
  std::optional<Entry> get(std::string_view kind, const std::string& key_text) const;
  /// Calls `visit` with every entry in file order (import_bundle uses this).
  void for_each(const std::function<void(const Entry&)>& visit) const;

 private:
  bool open_checked(const std::string& path);
  bool check_entries(const std::vector<BundleItem>& items);
  std::optional<Entry> read(const BundleItem& item, const std::string* expected_key_text) const;
  void close() noexcept;

  int fd_ = -1;
  std::string path_;
  std::string problem_;
  std::vector<BundleItem> order_;                         // file order, for for_each
  std::unordered_map<std::string, BundleItem> items_;     // "<kind>/<digest>" -> item
};

}  // namespace kjit::cache
